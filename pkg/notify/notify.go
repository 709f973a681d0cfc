// Package notify records a Kubernetes Event (events.k8s.io/v1) on a cluster object when its
// ClusterReadiness's Ready condition changes. Only the replica that holds the leader Lease
// records, so each change is recorded once.
package notify

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
)

// Event reasons.
const (
	ReasonClusterReady    = "ClusterReady"
	ReasonClusterNotReady = "ClusterNotReady"
)

// Recorder records readiness changes while this replica leads.
type Recorder struct {
	client    kubernetes.Interface
	namespace string
	lease     string
	identity  string
	leading   atomic.Bool
	recorder  events.EventRecorder
}

// New returns a recorder that elects a leader with the Lease namespace/lease.
func New(client kubernetes.Interface, namespace, lease string) *Recorder {
	host, _ := os.Hostname()
	return &Recorder{client: client, namespace: namespace, lease: lease, identity: host + "_" + uuid.NewString()}
}

// Run records events and takes part in the leader election until ctx is done.
func (r *Recorder) Run(ctx context.Context) {
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: r.client.EventsV1()})
	broadcaster.StartRecordingToSink(ctx.Done())
	defer broadcaster.Shutdown()
	r.recorder = broadcaster.NewRecorder(scheme.Scheme, "periscope")

	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: r.namespace, Name: r.lease},
		Client:     r.client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: r.identity},
	}
	for ctx.Err() == nil {
		elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock:            lock,
			ReleaseOnCancel: true,
			LeaseDuration:   15 * time.Second,
			RenewDeadline:   10 * time.Second,
			RetryPeriod:     2 * time.Second,
			Name:            r.lease,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(context.Context) {
					klog.InfoS("Leading: recording readiness events", "lease", r.namespace+"/"+r.lease)
					r.leading.Store(true)
				},
				OnStoppedLeading: func() { r.leading.Store(false) },
			},
		})
		if err != nil {
			klog.ErrorS(err, "Configuring the leader election; events are not recorded")
			return
		}
		elector.Run(ctx) // returns when leadership is lost; try again
	}
}

// Leading reports whether this replica records events.
func (r *Recorder) Leading() bool { return r.leading.Load() }

// ReadyChanged records the change on the source cluster object.
func (r *Recorder) ReadyChanged(_ context.Context, obj *v1alpha1.ClusterReadiness, ready metav1.Condition) {
	if !r.leading.Load() || r.recorder == nil {
		return
	}
	regarding := &corev1.ObjectReference{
		APIVersion: obj.Status.ClusterRef.APIVersion, Kind: obj.Status.ClusterRef.Kind,
		Namespace: obj.Namespace, Name: obj.Status.ClusterRef.Name, UID: obj.UID,
	}
	reason, eventType := ReasonClusterNotReady, corev1.EventTypeWarning
	note := fmt.Sprintf("%s: %s", ready.Reason, ready.Message)
	if ready.Status == metav1.ConditionTrue {
		reason, eventType = ReasonClusterReady, corev1.EventTypeNormal
		note = ready.Message
		for _, c := range obj.Status.Conditions {
			if c.Type == "AddonsDeployed" {
				note = fmt.Sprintf("%s; %s", ready.Message, c.Message)
			}
		}
	}
	// The related object is the ClusterReadiness at the version of this change: it makes every
	// change an Event of its own, where the events library would otherwise fold repeated
	// identical ones into a series that it reports lazily.
	related := &corev1.ObjectReference{
		APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "ClusterReadiness",
		Namespace: obj.Namespace, Name: obj.Name, UID: obj.UID, ResourceVersion: obj.ResourceVersion,
	}
	r.recorder.Eventf(regarding, related, eventType, reason, "ReadinessChanged", "%s", note)
}

// Warn records a Warning Event on regarding if this replica leads, and reports whether it did:
// a problem an admin must fix, such as a malformed readiness extension registration.
func (r *Recorder) Warn(regarding *corev1.ObjectReference, reason, action, note string) bool {
	if !r.leading.Load() || r.recorder == nil {
		return false
	}
	r.recorder.Eventf(regarding, nil, corev1.EventTypeWarning, reason, action, "%s", note)
	return true
}
