//go:build e2e

package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
)

var (
	capiClusters     = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "clusters"}
	clusterSummaries = schema.GroupVersionResource{Group: "config.projectsveltos.io", Version: "v1beta1", Resource: "clustersummaries"}
)

func getReadiness(g gomega.Gomega, namespace, name string) *v1alpha1.ClusterReadiness {
	c, err := periscope.VisibilityV1alpha1().ClusterReadinesses(namespace).Get(context.Background(), name, metav1.GetOptions{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	return c
}

// setFeatures writes a ClusterSummary's feature summaries, as Sveltos would.
func setFeatures(namespace, name string, features ...map[string]interface{}) {
	list := make([]interface{}, 0, len(features))
	for _, f := range features {
		list = append(list, f)
	}
	patch := map[string]interface{}{"status": map[string]interface{}{"featureSummaries": list}}
	u := &unstructured.Unstructured{Object: patch}
	raw, err := u.MarshalJSON()
	gomega.ExpectWithOffset(1, err).NotTo(gomega.HaveOccurred())
	_, err = dyn.Resource(clusterSummaries).Namespace(namespace).Patch(context.Background(), name, types.MergePatchType, raw, metav1.PatchOptions{}, "status")
	gomega.ExpectWithOffset(1, err).NotTo(gomega.HaveOccurred())
}

func helm(status string) map[string]interface{} {
	return map[string]interface{}{"featureID": "Helm", "status": status}
}

// readinessEvents returns the reasons of the readiness Events recorded on a cluster object.
func readinessEvents(g gomega.Gomega, namespace, kind, name string) []string {
	return readinessEventsSince(g, namespace, kind, name, time.Time{})
}

// readinessEventsSince returns the reasons of the readiness Events recorded (or repeated, as an
// event series) on a cluster object since a time, oldest first.
func readinessEventsSince(g gomega.Gomega, namespace, kind, name string, since time.Time) []string {
	list, err := kube.EventsV1().Events(namespace).List(context.Background(), metav1.ListOptions{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	type seen struct {
		reason string
		at     time.Time
	}
	var events []seen
	for _, e := range list.Items {
		if e.Regarding.Kind != kind || e.Regarding.Name != name || e.ReportingController != "periscope" {
			continue
		}
		at := e.EventTime.Time
		if e.Series != nil && e.Series.LastObservedTime.After(at) {
			at = e.Series.LastObservedTime.Time
		}
		if !at.Before(since) {
			events = append(events, seen{e.Reason, at})
		}
	}
	sort.Slice(events, func(i, j int) bool { return events[i].at.Before(events[j].at) })
	var reasons []string
	for _, e := range events {
		reasons = append(reasons, e.reason)
	}
	return reasons
}

var _ = ginkgo.Describe("ClusterReadiness", ginkgo.Ordered, func() {
	ginkgo.It("is listed in discovery, namespaced, with the verbs get, list and watch only", func() {
		resources, err := disco.ServerResourcesForGroupVersion("visibility.periscope.dev/v1alpha1")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		idx := slices.IndexFunc(resources.APIResources, func(r metav1.APIResource) bool { return r.Name == "clusterreadinesses" })
		gomega.Expect(idx).NotTo(gomega.Equal(-1))
		r := resources.APIResources[idx]
		gomega.Expect(slices.Sorted(slices.Values(r.Verbs))).To(gomega.Equal([]string{"get", "list", "watch"}))
		gomega.Expect(r.Namespaced).To(gomega.BeTrue())
		gomega.Expect(r.SingularName).To(gomega.Equal("clusterreadiness"))
	})

	ginkgo.It("answers every write with 405 and changes nothing", func(ctx context.Context) {
		client := dyn.Resource(v1alpha1.SchemeGroupVersion.WithResource("clusterreadinesses")).Namespace("team-a")
		before := getReadiness(gomega.Default, "team-a", "prod-1")
		obj := &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "visibility.periscope.dev/v1alpha1", "kind": "ClusterReadiness",
			"metadata": map[string]interface{}{"namespace": "team-a", "name": "prod-1", "resourceVersion": before.ResourceVersion},
		}}
		for name, write := range map[string]func() error{
			"create": func() error {
				o := obj.DeepCopy()
				o.SetName("new")
				o.SetResourceVersion("")
				_, err := client.Create(ctx, o, metav1.CreateOptions{})
				return err
			},
			"update": func() error { _, err := client.Update(ctx, obj, metav1.UpdateOptions{}); return err },
			"json patch": func() error {
				_, err := client.Patch(ctx, "prod-1", types.JSONPatchType, []byte(`[{"op":"replace","path":"/status/ready","value":true}]`), metav1.PatchOptions{})
				return err
			},
			"apply": func() error {
				_, err := client.Apply(ctx, "prod-1", obj, metav1.ApplyOptions{FieldManager: "e2e"})
				return err
			},
			"delete":            func() error { return client.Delete(ctx, "prod-1", metav1.DeleteOptions{}) },
			"delete collection": func() error { return client.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}) },
		} {
			err := write()
			gomega.Expect(apierrors.IsMethodNotSupported(err)).To(gomega.BeTrue(), "%s: got %v, want 405", name, err)
		}
		gomega.Expect(getReadiness(gomega.Default, "team-a", "prod-1").ResourceVersion).To(gomega.Equal(before.ResourceVersion))
	})

	ginkgo.It("answers malformed query parameters with 400 (422 for invalid list options, as kube-apiserver)", func(ctx context.Context) {
		rc := kube.Discovery().RESTClient()
		get := func(query string) error {
			_, err := rc.Get().RequestURI("/apis/visibility.periscope.dev/v1alpha1/namespaces/team-a/clusterreadinesses?" + query).DoRaw(ctx)
			return err
		}
		for _, query := range []string{"limit=abc", "timeoutSeconds=x", "labelSelector=a%20in%20(", "fieldSelector=status.ready%3D%3D%3Dx", "resourceVersion=abc"} {
			gomega.Expect(apierrors.IsBadRequest(get(query))).To(gomega.BeTrue(), "%s: want 400", query)
		}
		gomega.Expect(apierrors.IsInvalid(get("resourceVersionMatch=Sometime&resourceVersion=1"))).To(gomega.BeTrue(), "unsupported resourceVersionMatch: want 422")
	})

	ginkgo.It("tells the demo fleet's story in kubectl get clusterreadiness -A", func() {
		out, err := kubectl("get", "clusterreadiness", "-A")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		lines := strings.Split(strings.TrimSpace(out), "\n")
		gomega.Expect(strings.Fields(lines[0])).To(gomega.Equal([]string{"NAMESPACE", "NAME", "TYPE", "READY", "ADDONS", "REASON", "AGE"}))
		var rows [][]string
		for _, l := range lines[1:] {
			f := strings.Fields(l)
			rows = append(rows, f[:len(f)-1]) // AGE varies
		}
		gomega.Expect(rows).To(gomega.Equal([][]string{
			{"team-a", "prod-1", "Capi", "False", "1/2", "AddonsFailed"},
			{"team-a", "prod-2", "Capi", "True", "3/3", "Ready"},
			{"team-a", "staging-1", "Sveltos", "False", "0/1", "AddonsProvisioning"},
			{"team-b", "dev-1", "Sveltos", "False", "0/0", "ConnectionDown"},
			{"team-b", "edge-1", "Capi", "False", "0/2", "ControlPlaneNotInitialized"},
		}))
	})

	ginkgo.It("carries the cluster's identity and labels, and explains a failing add-on", func() {
		ctx := context.Background()
		cr := getReadiness(gomega.Default, "team-a", "prod-1")
		cluster, err := dyn.Resource(capiClusters).Namespace("team-a").Get(ctx, "prod-1", metav1.GetOptions{})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(cr.UID).To(gomega.Equal(cluster.GetUID()))
		gomega.Expect(cr.CreationTimestamp.Equal(ptrTime(cluster.GetCreationTimestamp()))).To(gomega.BeTrue())
		gomega.Expect(cr.Labels).To(gomega.Equal(cluster.GetLabels()))
		gomega.Expect(cr.OwnerReferences).To(gomega.BeEmpty())

		want := v1alpha1.ClusterReadinessStatus{
			ClusterRef:  v1alpha1.ClusterReference{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "Cluster", Name: "prod-1"},
			ClusterType: v1alpha1.ClusterTypeCapi,
			Addons:      v1alpha1.AddonCounts{Total: 2, Deployed: 1, Failed: 1},
			Profiles: []v1alpha1.ProfileReadiness{
				{Kind: "ClusterProfile", Name: "observability", ClusterSummary: "observability-capi-prod-1", State: v1alpha1.ProfileFailed,
					Features: []v1alpha1.FeatureStatus{{FeatureID: "Helm", Status: "Failed", FailureMessage: "chart kube-prometheus-stack: timed out waiting for the condition"}},
					Message:  "Helm: chart kube-prometheus-stack: timed out waiting for the condition"},
				{Kind: "ClusterProfile", Name: "security-baseline", ClusterSummary: "security-baseline-capi-prod-1", State: v1alpha1.ProfileDeployed,
					Features: []v1alpha1.FeatureStatus{{FeatureID: "Resources", Status: "Provisioned"}}},
			},
			Conditions: []metav1.Condition{
				{Type: "ClusterAvailable", Status: "True", Reason: "Available", Message: "the Cluster's Available condition is True"},
				{Type: "AddonsDeployed", Status: "False", Reason: "AddonsFailed", Message: "1 of 2 profiles failed: observability (Helm: chart kube-prometheus-stack: timed out waiting for the condition)"},
				{Type: "ChecksPassed", Status: "True", Reason: "NoChecks", Message: "no readiness extension applies to the cluster"},
				{Type: "Ready", Status: "False", Reason: "AddonsFailed", Message: "1 of 2 profiles failed: observability (Helm: chart kube-prometheus-stack: timed out waiting for the condition)"},
			},
		}
		diff := cmp.Diff(want, cr.Status, cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime"), cmpopts.EquateEmpty())
		gomega.Expect(diff).To(gomega.BeEmpty(), "status (-want +got)")
		// The DryRun profile cost-report-preview matches prod-1 by labels but deploys nothing.
		gomega.Expect(cr.Status.Profiles).NotTo(gomega.ContainElement(gomega.HaveField("Name", "cost-report-preview")))
		// The tenant's own Profile counts for the cluster it names.
		prod2 := getReadiness(gomega.Default, "team-a", "prod-2")
		gomega.Expect(prod2.Status.Profiles).To(gomega.ContainElement(gomega.And(
			gomega.HaveField("Kind", "Profile"), gomega.HaveField("Name", "team-a-apps"), gomega.HaveField("State", v1alpha1.ProfileDeployed))))
	})

	ginkgo.It("filters lists by labels and by the fields metadata.name, metadata.namespace and status.ready", func() {
		ctx := context.Background()
		names := func(opts metav1.ListOptions, namespace string) []string {
			list, err := periscope.VisibilityV1alpha1().ClusterReadinesses(namespace).List(ctx, opts)
			gomega.ExpectWithOffset(1, err).NotTo(gomega.HaveOccurred())
			var out []string
			for _, i := range list.Items {
				out = append(out, i.Namespace+"/"+i.Name)
			}
			return out
		}
		gomega.Expect(names(metav1.ListOptions{LabelSelector: "env=prod"}, "")).To(gomega.Equal([]string{"team-a/prod-1", "team-a/prod-2", "team-b/edge-1"}))
		gomega.Expect(names(metav1.ListOptions{FieldSelector: "status.ready=true"}, "")).To(gomega.Equal([]string{"team-a/prod-2"}))
		gomega.Expect(names(metav1.ListOptions{LabelSelector: "env=prod", FieldSelector: "status.ready=false"}, "")).To(gomega.Equal([]string{"team-a/prod-1", "team-b/edge-1"}))
		gomega.Expect(names(metav1.ListOptions{FieldSelector: "metadata.name=dev-1"}, "")).To(gomega.Equal([]string{"team-b/dev-1"}))
		gomega.Expect(names(metav1.ListOptions{FieldSelector: "metadata.namespace=team-b"}, "")).To(gomega.Equal([]string{"team-b/dev-1", "team-b/edge-1"}))
		gomega.Expect(names(metav1.ListOptions{}, "team-b")).To(gomega.Equal([]string{"team-b/dev-1", "team-b/edge-1"}))

		_, err := periscope.VisibilityV1alpha1().ClusterReadinesses("").List(ctx, metav1.ListOptions{FieldSelector: "status.addons=1"})
		gomega.Expect(apierrors.IsBadRequest(err)).To(gomega.BeTrue(), "%v", err)
		gomega.Expect(err.Error()).To(gomega.ContainSubstring("metadata.name, metadata.namespace, status.ready"))
		_, err = periscope.VisibilityV1alpha1().ClusterReadinesses("").List(ctx, metav1.ListOptions{LabelSelector: "env in (prod"})
		gomega.Expect(apierrors.IsBadRequest(err)).To(gomega.BeTrue(), "%v", err)
	})

	ginkgo.It("recorded no Event for the state found at start-up", func() {
		// These clusters' readiness never changes in this suite (prod-2's does when its CRD is
		// re-installed, which is a change while running and is recorded).
		for _, c := range []struct{ ns, kind, name string }{
			{"team-b", "SveltosCluster", "dev-1"}, {"team-b", "Cluster", "edge-1"},
		} {
			gomega.Expect(readinessEvents(gomega.Default, c.ns, c.kind, c.name)).To(gomega.BeEmpty(), c.name)
		}
	})

	ginkgo.It("turns Ready when the last add-on is provisioned and back when it fails: kubectl wait, kubectl get -w and Events follow", func() {
		watchSession, err := gexec.Start(kubectlCommand("get", "clusterreadiness", "-A", "-w"), ginkgo.GinkgoWriter, ginkgo.GinkgoWriter)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		ginkgo.DeferCleanup(func() { watchSession.Kill().Wait() })
		gomega.Eventually(watchSession.Out).Should(gbytes.Say(`team-a\s+staging-1\s+Sveltos\s+False\s+0/1\s+AddonsProvisioning`))

		waitSession, err := gexec.Start(kubectlCommand("wait", "--for", "condition=Ready", "clusterreadiness/staging-1", "-n", "team-a", "--timeout", "60s"), ginkgo.GinkgoWriter, ginkgo.GinkgoWriter)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		ginkgo.DeferCleanup(func() { waitSession.Kill().Wait() })
		gomega.Consistently(waitSession, 2*time.Second).ShouldNot(gexec.Exit(), "kubectl wait returned while an add-on is provisioning")

		since := time.Now().Add(-time.Second) // event times have microsecond precision; leave slack
		setFeatures("team-a", "observability-sveltos-staging-1", helm("Provisioned"))
		ginkgo.DeferCleanup(func() {
			setFeatures("team-a", "observability-sveltos-staging-1", helm("Provisioning"))
			gomega.Eventually(func(g gomega.Gomega) {
				g.Expect(getReadiness(g, "team-a", "staging-1").Status.Conditions[3].Reason).To(gomega.Equal("AddonsProvisioning"))
			}).Should(gomega.Succeed())
		})
		gomega.Eventually(waitSession, 10*time.Second).Should(gexec.Exit(0))
		gomega.Expect(waitSession.Out).To(gbytes.Say("condition met"))
		gomega.Eventually(watchSession.Out, 10*time.Second).Should(gbytes.Say(`team-a\s+staging-1\s+Sveltos\s+True\s+1/1\s+Ready`))
		gomega.Eventually(func(g gomega.Gomega) {
			g.Expect(readinessEventsSince(g, "team-a", "SveltosCluster", "staging-1", since)).To(gomega.Equal([]string{"ClusterReady"}))
		}).Should(gomega.Succeed())

		// The add-on fails: the row, the condition and an Event say so.
		failed := helm("Failed")
		failed["failureMessage"] = "chart kube-prometheus-stack: timed out"
		setFeatures("team-a", "observability-sveltos-staging-1", failed)
		gomega.Eventually(watchSession.Out, 10*time.Second).Should(gbytes.Say(`team-a\s+staging-1\s+Sveltos\s+False\s+0/1\s+AddonsFailed`))
		gomega.Eventually(func(g gomega.Gomega) {
			ready := getReadiness(g, "team-a", "staging-1").Status.Conditions[3]
			g.Expect(ready.Message).To(gomega.Equal("1 of 1 profiles failed: observability (Helm: chart kube-prometheus-stack: timed out)"))
			g.Expect(readinessEventsSince(g, "team-a", "SveltosCluster", "staging-1", since)).To(gomega.Equal([]string{"ClusterReady", "ClusterNotReady"}))
		}).Should(gomega.Succeed())
	})

	ginkgo.It("keeps kubectl wait waiting while an add-on is Failed", func() {
		_, err := kubectl("wait", "--for", "condition=Ready", "clusterreadiness/prod-1", "-n", "team-a", "--timeout", "3s")
		gomega.Expect(err).To(gomega.MatchError(gomega.ContainSubstring("timed out")))
	})

	ginkgo.It("tells a watch with a label selector that a cluster stopped matching with DELETED", func() {
		ctx := context.Background()
		list, err := periscope.VisibilityV1alpha1().ClusterReadinesses("").List(ctx, metav1.ListOptions{LabelSelector: "env=prod"})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		w, err := periscope.VisibilityV1alpha1().ClusterReadinesses("").Watch(ctx, metav1.ListOptions{LabelSelector: "env=prod", ResourceVersion: list.ResourceVersion})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		defer w.Stop()

		relabel := func(env string) {
			_, err := dyn.Resource(capiClusters).Namespace("team-b").Patch(ctx, "edge-1", types.MergePatchType, []byte(`{"metadata":{"labels":{"env":"`+env+`"}}}`), metav1.PatchOptions{})
			gomega.ExpectWithOffset(1, err).NotTo(gomega.HaveOccurred())
		}
		relabel("retired")
		ginkgo.DeferCleanup(func() { relabel("prod") })
		var ev watch.Event
		gomega.Eventually(w.ResultChan(), 10*time.Second).Should(gomega.Receive(&ev))
		gomega.Expect(ev.Type).To(gomega.Equal(watch.Deleted))
		gomega.Expect(ev.Object.(*v1alpha1.ClusterReadiness).Name).To(gomega.Equal("edge-1"))
		// The object is still there for everyone else, now without a profile that selects prod.
		gomega.Eventually(func(g gomega.Gomega) {
			g.Expect(getReadiness(g, "team-b", "edge-1").Status.Addons.Total).To(gomega.BeZero())
		}).Should(gomega.Succeed())
	})

	ginkgo.It("lets a tenant bound to view read its namespace only", func() {
		ctx := context.Background()
		binding := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "e2e-tenant-view", Namespace: "team-a"},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "view"},
			Subjects:   []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: "e2e-tenant-a"}},
		}
		_, err := kube.RbacV1().RoleBindings("team-a").Create(ctx, binding, metav1.CreateOptions{})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		ginkgo.DeferCleanup(func(ctx context.Context) {
			gomega.Expect(kube.RbacV1().RoleBindings("team-a").Delete(ctx, binding.Name, metav1.DeleteOptions{})).To(gomega.Succeed())
		})
		tenant := impersonating("e2e-tenant-a").VisibilityV1alpha1()
		gomega.Eventually(func(g gomega.Gomega) {
			list, err := tenant.ClusterReadinesses("team-a").List(ctx, metav1.ListOptions{})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(list.Items).To(gomega.HaveLen(3))
		}).Should(gomega.Succeed())
		_, err = tenant.ClusterReadinesses("team-a").Get(ctx, "prod-1", metav1.GetOptions{})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		w, err := tenant.ClusterReadinesses("team-a").Watch(ctx, metav1.ListOptions{})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		w.Stop()

		_, err = tenant.ClusterReadinesses("team-b").Get(ctx, "dev-1", metav1.GetOptions{})
		gomega.Expect(apierrors.IsForbidden(err)).To(gomega.BeTrue(), "team-b get: %v", err)
		_, err = tenant.ClusterReadinesses("team-b").List(ctx, metav1.ListOptions{})
		gomega.Expect(apierrors.IsForbidden(err)).To(gomega.BeTrue(), "team-b list: %v", err)
		_, err = tenant.ClusterReadinesses("").List(ctx, metav1.ListOptions{})
		gomega.Expect(apierrors.IsForbidden(err)).To(gomega.BeTrue(), "-A list: %v", err)

		out, err := kubectl("auth", "can-i", "list", "clusterreadinesses.visibility.periscope.dev", "-n", "team-a", "--as", "e2e-tenant-a")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(strings.TrimSpace(out)).To(gomega.Equal("yes"))
		out, _ = kubectl("auth", "can-i", "list", "clusterreadinesses.visibility.periscope.dev", "-n", "team-b", "--as", "e2e-tenant-a")
		gomega.Expect(strings.TrimSpace(out)).To(gomega.Equal("no"))
		out, _ = kubectl("auth", "can-i", "list", "clusterreadinesses.visibility.periscope.dev", "-A", "--as", "e2e-tenant-a")
		gomega.Expect(strings.TrimSpace(out)).To(gomega.Equal("no"))
	})

	ginkgo.It("reads v1beta1-shaped Cluster API clusters, and follows a CRD removed and installed again without restart", func() {
		ctx := context.Background()
		crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
		original, err := crds.Get(ctx, "clusters.cluster.x-k8s.io", metav1.GetOptions{})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		before, err := periscope.VisibilityV1alpha1().ClusterReadinesses("").List(ctx, metav1.ListOptions{})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		w, err := periscope.VisibilityV1alpha1().ClusterReadinesses("").Watch(ctx, metav1.ListOptions{ResourceVersion: before.ResourceVersion})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		defer w.Stop()
		deleteCRD := func() {
			err := crds.Delete(ctx, "clusters.cluster.x-k8s.io", metav1.DeleteOptions{})
			gomega.Expect(err == nil || apierrors.IsNotFound(err)).To(gomega.BeTrue(), "%v", err)
			gomega.Eventually(func() bool {
				_, err := crds.Get(ctx, "clusters.cluster.x-k8s.io", metav1.GetOptions{})
				return apierrors.IsNotFound(err)
			}, time.Minute).Should(gomega.BeTrue())
		}
		deleteCRD()
		ginkgo.DeferCleanup(func() {
			deleteCRD()
			restored := original.DeepCopy()
			unstructured.RemoveNestedField(restored.Object, "status")
			restored.SetResourceVersion("")
			restored.SetUID("")
			restored.SetManagedFields(nil)
			_, err := crds.Create(context.Background(), restored, metav1.CreateOptions{})
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			_, err = kubectl("wait", "--for", "condition=Established", "--timeout", "60s", "crd/clusters.cluster.x-k8s.io")
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			reloadDemoFleet()
			gomega.Eventually(func(g gomega.Gomega) {
				g.Expect(getReadiness(g, "team-a", "prod-2").Status.Ready).To(gomega.BeTrue())
			}, time.Minute).Should(gomega.Succeed())
		})
		// A watcher is told of each Cluster API cluster's object going away with its CRD.
		deleted := map[string]bool{}
		gomega.Eventually(func() map[string]bool {
			select {
			case ev := <-w.ResultChan():
				if ev.Type == watch.Deleted {
					deleted[ev.Object.(*v1alpha1.ClusterReadiness).Name] = true
				}
			default:
			}
			return deleted
		}, time.Minute).Should(gomega.Equal(map[string]bool{"prod-1": true, "prod-2": true, "edge-1": true}))
		// Sveltos clusters stay.
		gomega.Eventually(func(g gomega.Gomega) {
			list, err := periscope.VisibilityV1alpha1().ClusterReadinesses("").List(ctx, metav1.ListOptions{})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			var names []string
			for _, i := range list.Items {
				names = append(names, i.Name)
			}
			g.Expect(names).To(gomega.Equal([]string{"staging-1", "dev-1"}))
		}, time.Minute).Should(gomega.Succeed())

		// A Cluster API install that serves v1beta1 only.
		v1beta1Only := original.DeepCopy()
		unstructured.RemoveNestedField(v1beta1Only.Object, "status")
		v1beta1Only.SetResourceVersion("")
		v1beta1Only.SetUID("")
		v1beta1Only.SetManagedFields(nil)
		versions, _, _ := unstructured.NestedSlice(v1beta1Only.Object, "spec", "versions")
		var kept []interface{}
		for _, v := range versions {
			m := v.(map[string]interface{})
			if m["name"] == "v1beta1" {
				m["storage"] = true
				kept = append(kept, m)
			}
		}
		gomega.Expect(kept).To(gomega.HaveLen(1))
		gomega.Expect(unstructured.SetNestedSlice(v1beta1Only.Object, kept, "spec", "versions")).To(gomega.Succeed())
		unstructured.RemoveNestedField(v1beta1Only.Object, "spec", "conversion")
		_, err = crds.Create(ctx, v1beta1Only, metav1.CreateOptions{})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		_, err = kubectl("wait", "--for", "condition=Established", "--timeout", "60s", "crd/clusters.cluster.x-k8s.io")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())

		v1beta1 := schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta1", Resource: "clusters"}
		legacy := &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
			"metadata": map[string]interface{}{"namespace": "team-b", "name": "legacy-1", "labels": map[string]interface{}{"env": "legacy"}},
			"spec":     map[string]interface{}{"paused": false},
		}}
		gomega.Eventually(func() error {
			_, err := dyn.Resource(v1beta1).Namespace("team-b").Create(ctx, legacy, metav1.CreateOptions{})
			return err
		}, 30*time.Second).Should(gomega.Succeed())
		ginkgo.DeferCleanup(func(ctx context.Context) {
			err := dyn.Resource(v1beta1).Namespace("team-b").Delete(ctx, "legacy-1", metav1.DeleteOptions{})
			gomega.Expect(err == nil || apierrors.IsNotFound(err)).To(gomega.BeTrue(), "%v", err)
		})
		gomega.Eventually(func(g gomega.Gomega) {
			cr := getReadiness(g, "team-b", "legacy-1")
			g.Expect(cr.Status.ClusterRef.APIVersion).To(gomega.Equal("cluster.x-k8s.io/v1beta1"))
			g.Expect(cr.Status.Conditions[0].Reason).To(gomega.Equal("InfrastructureNotReady"))
		}, time.Minute).Should(gomega.Succeed())

		_, err = dyn.Resource(v1beta1).Namespace("team-b").Patch(ctx, "legacy-1", types.MergePatchType,
			[]byte(`{"status":{"infrastructureReady":true,"controlPlaneReady":true}}`), metav1.PatchOptions{}, "status")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Eventually(func(g gomega.Gomega) {
			cr := getReadiness(g, "team-b", "legacy-1")
			g.Expect(cr.Status.Ready).To(gomega.BeTrue())
			g.Expect(cr.Status.Conditions[0].Message).To(gomega.Equal("infrastructure and control plane are ready"))
		}).Should(gomega.Succeed())
	})
})

// reloadDemoFleet applies the demo fleet again, with its statuses (hack/lib/demo.sh).
func reloadDemoFleet() { reloadDemo("demo::load_fleet") }

// reloadDemo runs a loader of hack/lib/demo.sh against the local control plane.
func reloadDemo(loader string) {
	script := `source hack/lib/demo.sh && KUBECTL=("$0" --kubeconfig "$1") && ` + loader
	cmd := exec.Command("bash", "-c", script, cluster.Kubectl, cluster.Kubeconfig)
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.CombinedOutput()
	gomega.ExpectWithOffset(1, err).NotTo(gomega.HaveOccurred(), string(out))
}

func ptrTime(t metav1.Time) *metav1.Time { return &t }
