package readinessextension

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
	"periscope.dev/periscope/pkg/conditions"
	"periscope.dev/periscope/pkg/extensions/registration"
)

// Condition types and reasons of a ReadinessExtension.
const (
	ConditionValid           = "Valid"
	ConditionDiscovered      = "Discovered"
	ConditionHandlersHealthy = "HandlersHealthy"
	ConditionReady           = "Ready"

	ReasonValid            = "Valid"
	ReasonDiscovered       = "Discovered"
	ReasonDiscoveryPending = "DiscoveryPending"
	ReasonNoneFailing      = "NoneFailing"
	ReasonHandlersFailing  = "HandlersFailing"
	ReasonReady            = "Ready"
)

// View is what is known of a registration.
type View struct {
	Registration   registration.Registration
	Invalid        string
	Discovered     bool
	DiscoveryError string
	Handlers       []v1alpha1.HandlerStatus
}

// Build returns the ReadinessExtension of a registration. Conditions move their
// lastTransitionTime to now only when their status changes from previous.
func Build(cm *corev1.ConfigMap, v View, previous []metav1.Condition, now time.Time) *v1alpha1.ReadinessExtension {
	obj := &v1alpha1.ReadinessExtension{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "ReadinessExtension"},
		ObjectMeta: metav1.ObjectMeta{
			Name: cm.Name, UID: cm.UID, CreationTimestamp: cm.CreationTimestamp, Labels: cm.Labels,
		},
		Spec: v1alpha1.ReadinessExtensionSpec{ConfigMap: cm.Namespace + "/" + cm.Name},
	}
	valid := metav1.Condition{Type: ConditionValid, Status: metav1.ConditionTrue, Reason: ReasonValid, Message: "the registration is valid"}
	discovered := metav1.Condition{Type: ConditionDiscovered}
	healthy := metav1.Condition{Type: ConditionHandlersHealthy}
	if v.Invalid != "" {
		valid = metav1.Condition{Type: ConditionValid, Status: metav1.ConditionFalse, Reason: ReasonInvalidRegistration, Message: v.Invalid}
		discovered.Status, discovered.Reason, discovered.Message = metav1.ConditionFalse, ReasonInvalidRegistration, "not discovered: the registration is invalid"
		healthy.Status, healthy.Reason, healthy.Message = metav1.ConditionFalse, ReasonInvalidRegistration, "not called: the registration is invalid"
	} else {
		reg := v.Registration
		obj.Spec.Endpoint = reg.ClientConfig.Endpoint()
		obj.Spec.NamespaceSelector, obj.Spec.ClusterSelector, obj.Spec.Settings = reg.NamespaceSelectorSpec, reg.ClusterSelectorSpec, reg.Settings
		obj.Status.Handlers = v.Handlers
		obj.Status.DiscoveryError = v.DiscoveryError
		switch {
		case v.DiscoveryError != "":
			discovered.Status, discovered.Reason, discovered.Message = metav1.ConditionFalse, ReasonDiscoveryFailed, v.DiscoveryError
			if v.Discovered {
				discovered.Message += " (the handlers discovered before are kept)"
			}
		case v.Discovered:
			discovered.Status, discovered.Reason = metav1.ConditionTrue, ReasonDiscovered
			discovered.Message = fmt.Sprintf("%d ClusterReadinessCheck handlers", len(v.Handlers))
			if len(v.Handlers) == 1 {
				discovered.Message = "1 ClusterReadinessCheck handler"
			}
		default:
			discovered.Status, discovered.Reason, discovered.Message = metav1.ConditionUnknown, ReasonDiscoveryPending, "not discovered yet"
		}
		var failing []string
		unknown := 0
		for _, h := range v.Handlers {
			switch h.Health {
			case v1alpha1.HandlerFailing:
				failing = append(failing, fmt.Sprintf("%s: %s", h.Name, h.LastError))
			case v1alpha1.HandlerUnknown:
				unknown++
			}
		}
		if len(failing) > 0 {
			healthy.Status, healthy.Reason = metav1.ConditionFalse, ReasonHandlersFailing
			healthy.Message = fmt.Sprintf("%d of %d handlers failing: %s", len(failing), len(v.Handlers), strings.Join(failing, "; "))
		} else {
			healthy.Status, healthy.Reason = metav1.ConditionTrue, ReasonNoneFailing
			healthy.Message = fmt.Sprintf("no handler failing (%d not called yet)", unknown)
		}
	}
	ready := metav1.Condition{Type: ConditionReady, Status: metav1.ConditionTrue, Reason: ReasonReady, Message: "discovered, and no handler is failing"}
	for _, c := range []metav1.Condition{valid, discovered, healthy} {
		if c.Status != metav1.ConditionTrue {
			ready = metav1.Condition{Type: ConditionReady, Status: c.Status, Reason: c.Reason, Message: c.Message}
			break
		}
	}
	for _, c := range []metav1.Condition{valid, discovered, healthy, ready} {
		obj.Status.Conditions = append(obj.Status.Conditions, conditions.WithTransition(c, previous, now))
	}
	return obj
}
