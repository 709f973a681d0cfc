package rukpak

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
	"periscope.dev/periscope/pkg/sources/accessors"
)

// BundleFromUnstructured reads a core.rukpak.io Bundle. Phases: Unpacked is Ready, Failing is
// Failing, everything else (Pending, Unpacking, none yet, or a phase this version does not
// know) is Pending. It never panics; a malformed object is an error.
func BundleFromUnstructured(u *unstructured.Unstructured) (BundleRef, error) {
	ref, err := classRef(u)
	if err != nil {
		return ref, err
	}
	phase, _, err := accessors.String(u.Object, "status", "phase")
	if err != nil {
		return ref, err
	}
	switch phase {
	case "Unpacked":
		ref.Progress = Ready
	case "Failing":
		ref.Progress = Failing
	default:
		ref.Progress = Pending
	}
	return ref, nil
}

// BundleDeploymentFromUnstructured reads a core.rukpak.io BundleDeployment (v1alpha1 or
// v1alpha2): its Installed condition True is Ready, False is Failing, absent or Unknown is
// Pending.
func BundleDeploymentFromUnstructured(u *unstructured.Unstructured) (BundleRef, error) {
	ref, err := classRef(u)
	if err != nil {
		return ref, err
	}
	installed, found, err := accessors.ConditionStatus(u.Object, "Installed")
	if err != nil {
		return ref, err
	}
	switch {
	case !found:
		ref.Progress = Pending
	case installed == "True":
		ref.Progress = Ready
	case installed == "False":
		ref.Progress = Failing
	default:
		ref.Progress = Pending
	}
	return ref, nil
}

func classRef(u *unstructured.Unstructured) (BundleRef, error) {
	ref := BundleRef{Name: u.GetName(), LastWrite: accessors.LastWrite(u)}
	class, found, err := accessors.String(u.Object, "spec", "provisionerClassName")
	if err != nil {
		return ref, err
	}
	if !found || class == "" {
		return ref, fmt.Errorf("spec.provisionerClassName is missing")
	}
	ref.Class = class
	return ref, nil
}

// WorkloadFromDeployment reads a Deployment; spec.replicas defaults to 1 as the API does.
func WorkloadFromDeployment(d *appsv1.Deployment) Workload {
	desired := int32(1)
	if d.Spec.Replicas != nil {
		desired = *d.Spec.Replicas
	}
	return Workload{
		Kind: v1alpha1.WorkloadDeployment, Namespace: d.Namespace, Name: d.Name,
		Labels: d.Labels, Annotations: d.Annotations,
		Desired: desired, Ready: d.Status.ReadyReplicas, LastWrite: accessors.LastWrite(d),
	}
}

// WorkloadFromStatefulSet reads a StatefulSet; spec.replicas defaults to 1 as the API does.
func WorkloadFromStatefulSet(s *appsv1.StatefulSet) Workload {
	desired := int32(1)
	if s.Spec.Replicas != nil {
		desired = *s.Spec.Replicas
	}
	return Workload{
		Kind: v1alpha1.WorkloadStatefulSet, Namespace: s.Namespace, Name: s.Name,
		Labels: s.Labels, Annotations: s.Annotations,
		Desired: desired, Ready: s.Status.ReadyReplicas, LastWrite: accessors.LastWrite(s),
	}
}

// WorkloadFromDaemonSet reads a DaemonSet: desired is the number of nodes it should run on.
func WorkloadFromDaemonSet(d *appsv1.DaemonSet) Workload {
	return Workload{
		Kind: v1alpha1.WorkloadDaemonSet, Namespace: d.Namespace, Name: d.Name,
		Labels: d.Labels, Annotations: d.Annotations,
		Desired: d.Status.DesiredNumberScheduled, Ready: d.Status.NumberReady, LastWrite: accessors.LastWrite(d),
	}
}
