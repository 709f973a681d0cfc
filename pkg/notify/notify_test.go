package notify

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
)

func readiness(ready bool) (*v1alpha1.ClusterReadiness, metav1.Condition) {
	obj := &v1alpha1.ClusterReadiness{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "prod-1", UID: "u-1", ResourceVersion: "42"},
		Status: v1alpha1.ClusterReadinessStatus{
			ClusterRef: v1alpha1.ClusterReference{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "Cluster", Name: "prod-1"},
			Conditions: []metav1.Condition{{Type: "AddonsDeployed", Status: "True", Message: "all 4 add-on profiles deployed"}},
		},
	}
	cond := metav1.Condition{Type: "Ready", Status: "False", Reason: "AddonsFailed", Message: "1 of 4 profiles failed: observability (Helm: timed out)"}
	if ready {
		cond = metav1.Condition{Type: "Ready", Status: "True", Reason: "Ready", Message: "the cluster is available, every add-on is deployed and every check passed"}
	}
	return obj, cond
}

func TestOnlyTheLeaderRecordsAndTheEventNamesTheChange(t *testing.T) {
	client := fake.NewClientset()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	broadcaster.StartRecordingToSink(ctx.Done())
	defer broadcaster.Shutdown()
	r := New(client, "periscope-system", "lease")
	r.recorder = broadcaster.NewRecorder(scheme.Scheme, "periscope")

	obj, notReady := readiness(false)
	r.ReadyChanged(ctx, obj, notReady) // not leading: nothing
	r.leading.Store(true)
	obj, ready := readiness(true)
	r.ReadyChanged(ctx, obj, ready)

	var got []eventsv1.Event
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		list, err := client.EventsV1().Events("team-a").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got = list.Items; len(got) > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // a second, wrong event would have arrived by now
	list, _ := client.EventsV1().Events("team-a").List(ctx, metav1.ListOptions{})
	if len(list.Items) != 1 {
		t.Fatalf("%d events, want exactly 1 (the leader's)", len(list.Items))
	}
	e := list.Items[0]
	type summary struct{ Reason, Type, Note, Kind, Name, Controller string }
	want := summary{"ClusterReady", "Normal", "the cluster is available, every add-on is deployed and every check passed; all 4 add-on profiles deployed", "Cluster", "prod-1", "periscope"}
	if diff := cmp.Diff(want, summary{e.Reason, e.Type, e.Note, e.Regarding.Kind, e.Regarding.Name, e.ReportingController}); diff != "" {
		t.Errorf("event (-want +got):\n%s", diff)
	}
	if e.Related == nil || e.Related.Kind != "ClusterReadiness" || e.Related.ResourceVersion != "42" {
		t.Errorf("related = %+v, want the ClusterReadiness at the change's version", e.Related)
	}
}
