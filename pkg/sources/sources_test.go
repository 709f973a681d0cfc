package sources

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestPickVersion(t *testing.T) {
	tests := []struct {
		name               string
		understood, served []string
		want               string
	}{
		{"server's preferred version is understood", []string{"v1alpha2", "v1alpha1"}, []string{"v1alpha1", "v1alpha2"}, "v1alpha1"},
		{"preferred not understood: first understood that is served", []string{"v1alpha2", "v1alpha1"}, []string{"v2", "v1alpha1"}, "v1alpha1"},
		{"nothing understood", []string{"v1alpha1"}, []string{"v2"}, ""},
		{"group not served", []string{"v1alpha1"}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := pickVersion(tt.understood, tt.served); got != tt.want {
				t.Errorf("pickVersion = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestKeepFieldsTrimsToWhatIsRead(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	written := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	in := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "core.rukpak.io/v1alpha1",
		"kind":       "Bundle",
		"metadata": map[string]interface{}{
			"name":              "b",
			"creationTimestamp": created.UTC().Format(time.RFC3339),
			"annotations":       map[string]interface{}{"kubectl.kubernetes.io/last-applied-configuration": "{...}", "keep": "me"},
			"managedFields": []interface{}{
				map[string]interface{}{"manager": "kubectl", "operation": "Apply", "time": "2026-02-01T00:00:00Z", "fieldsV1": map[string]interface{}{"f:spec": map[string]interface{}{}}},
				map[string]interface{}{"manager": "core", "operation": "Update", "subresource": "status", "time": written.Format(time.RFC3339)},
			},
		},
		"spec":   map[string]interface{}{"provisionerClassName": "c", "source": map[string]interface{}{"type": "image"}},
		"status": map[string]interface{}{"phase": "Unpacked", "resolvedSource": map[string]interface{}{"type": "image"}},
	}}
	out, err := KeepFields([]string{"spec", "provisionerClassName"}, []string{"status", "phase"})(in)
	if err != nil {
		t.Fatal(err)
	}
	u := out.(*unstructured.Unstructured)
	want := map[string]interface{}{
		"apiVersion": "core.rukpak.io/v1alpha1",
		"kind":       "Bundle",
		"metadata": map[string]interface{}{
			"name":              "b",
			"creationTimestamp": created.UTC().Format(time.RFC3339),
			"annotations":       map[string]interface{}{"keep": "me"},
			"managedFields":     []interface{}{map[string]interface{}{"manager": lastWriteManager, "time": written.Format(time.RFC3339)}},
		},
		"spec":   map[string]interface{}{"provisionerClassName": "c"},
		"status": map[string]interface{}{"phase": "Unpacked"},
	}
	if diff := cmp.Diff(want, u.Object); diff != "" {
		t.Errorf("trimmed object (-want +got):\n%s", diff)
	}
}

func TestTrimItemsKeepsOnlyTheNamedKeysOfListItems(t *testing.T) {
	in := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "config.projectsveltos.io/v1beta1", "kind": "ClusterSummary",
		"metadata": map[string]interface{}{"name": "s"},
		"status": map[string]interface{}{
			"featureSummaries": []interface{}{
				map[string]interface{}{"featureID": "Helm", "status": "Provisioned", "hash": "abc", "lastAppliedTime": "2026-01-01T00:00:00Z"},
				"not an object",
			},
			"dependencies": "dropped by KeepFields",
		},
	}}
	original := in.DeepCopy()
	transform := TrimItems(KeepFields([]string{"status", "featureSummaries"}),
		ItemFields{Path: []string{"status", "featureSummaries"}, Keys: []string{"featureID", "status", "failureMessage"}},
		ItemFields{Path: []string{"status", "absent"}, Keys: []string{"x"}})
	out, err := transform(in)
	if err != nil {
		t.Fatal(err)
	}
	got, _, _ := unstructured.NestedFieldNoCopy(out.(*unstructured.Unstructured).Object, "status")
	want := map[string]interface{}{"featureSummaries": []interface{}{
		map[string]interface{}{"featureID": "Helm", "status": "Provisioned"},
		"not an object",
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trimmed status (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(original.Object["status"], in.Object["status"]); diff != "" {
		t.Errorf("the input's status changed (-before +after):\n%s", diff)
	}
}

func TestTrimWorkloadDropsThePodTemplate(t *testing.T) {
	replicas := int32(2)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "core", Namespace: "rukpak-system", Annotations: map[string]string{"a": "b"}},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: "x"}}}}},
		Status: appsv1.DeploymentStatus{ReadyReplicas: 1},
	}
	out, err := trimWorkload(d)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*appsv1.Deployment)
	if len(got.Spec.Template.Spec.Containers) != 0 {
		t.Error("pod template kept")
	}
	if *got.Spec.Replicas != 2 || got.Status.ReadyReplicas != 1 || got.Annotations["a"] != "b" {
		t.Errorf("fields the computation reads were lost: %+v", got)
	}
}
