//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
	periscopeclient "periscope.dev/periscope/pkg/generated/clientset/versioned"
)

var rukpakConfigs = schema.GroupVersionResource{Group: "visibility.periscope.dev", Version: "v1alpha1", Resource: "rukpakconfigs"}

func getConfig(g gomega.Gomega) *v1alpha1.RukPakConfig {
	c, err := periscope.VisibilityV1alpha1().RukPakConfigs().Get(context.Background(), "cluster", metav1.GetOptions{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	return c
}

func provisioner(c *v1alpha1.RukPakConfig, namespace, name string) *v1alpha1.Provisioner {
	for i := range c.Status.Provisioners {
		if p := &c.Status.Provisioners[i]; p.Namespace == namespace && p.Name == name {
			return p
		}
	}
	return nil
}

func classOf(c *v1alpha1.RukPakConfig, name string) *v1alpha1.ProvisionerClass {
	for i := range c.Status.Classes {
		if cl := &c.Status.Classes[i]; cl.Name == name {
			return cl
		}
	}
	return nil
}

func patchDeployment(namespace, name, subresource, patch string) {
	var sub []string
	if subresource != "" {
		sub = []string{subresource}
	}
	_, err := kube.AppsV1().Deployments(namespace).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, sub...)
	gomega.ExpectWithOffset(1, err).NotTo(gomega.HaveOccurred())
}

func counts(total, ready, failing, pending int32) v1alpha1.BundleCounts {
	return v1alpha1.BundleCounts{Total: total, Ready: ready, Failing: failing, Pending: pending}
}

// demoStatus is what the demo data of hack/demo must compute to.
var demoStatus = v1alpha1.RukPakConfigStatus{
	Installed: true,
	Provisioners: []v1alpha1.Provisioner{
		{Namespace: "acme-system", Name: "jsonnet-provisioner", Kind: v1alpha1.WorkloadDeployment, ClassNames: []string{"acme-io-jsonnet"}, State: v1alpha1.ProvisionerRunning, DesiredReplicas: 2, ReadyReplicas: 2},
		{Namespace: "rukpak-system", Name: "core", Kind: v1alpha1.WorkloadDeployment, ClassNames: []string{"core-rukpak-io-plain", "core-rukpak-io-registry"}, State: v1alpha1.ProvisionerRunning, DesiredReplicas: 1, ReadyReplicas: 1},
		{Namespace: "rukpak-system", Name: "helm-provisioner", Kind: v1alpha1.WorkloadDeployment, ClassNames: []string{"core-rukpak-io-helm"}, State: v1alpha1.ProvisionerDisabled, Message: "scaled to 0"},
	},
	Classes: []v1alpha1.ProvisionerClass{
		{Name: "acme-io-jsonnet", Provisioner: "acme-system/jsonnet-provisioner", State: v1alpha1.ClassAvailable, BundleDeployments: counts(1, 1, 0, 0)},
		{Name: "acme-io-kustomize", State: v1alpha1.ClassMissing, Bundles: counts(1, 0, 0, 1), BundleDeployments: counts(1, 0, 0, 1)},
		{Name: "core-rukpak-io-helm", BundleFormat: "helm+v3", Provisioner: "rukpak-system/helm-provisioner", State: v1alpha1.ClassDisabled, Bundles: counts(2, 0, 0, 2), BundleDeployments: counts(1, 0, 0, 1)},
		{Name: "core-rukpak-io-plain", BundleFormat: "plain+v0", Provisioner: "rukpak-system/core", State: v1alpha1.ClassAvailable, Bundles: counts(2, 1, 1, 0), BundleDeployments: counts(1, 1, 0, 0)},
		{Name: "core-rukpak-io-registry", BundleFormat: "registry+v1", Provisioner: "rukpak-system/core", State: v1alpha1.ClassAvailable, Bundles: counts(1, 0, 0, 1), BundleDeployments: counts(1, 0, 1, 0)},
	},
	Conditions: []metav1.Condition{
		{Type: "Available", Status: metav1.ConditionFalse, Reason: "ClassMissing",
			Message: "no provisioner serves acme-io-kustomize, which 1 bundle and 1 bundle deployment name; core-rukpak-io-helm is served by rukpak-system/helm-provisioner, scaled to 0; 2 bundles and 1 bundle deployment wait for it"},
		{Type: "SourcesValid", Status: metav1.ConditionTrue, Reason: "Valid", Message: "every source object could be read"},
	},
}

var _ = ginkgo.Describe("RukPakConfig", ginkgo.Ordered, func() {
	ginkgo.It("is listed in discovery with the verbs get, list and watch only", func() {
		resources, err := disco.ServerResourcesForGroupVersion("visibility.periscope.dev/v1alpha1")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		var found *metav1.APIResource
		for i := range resources.APIResources {
			if resources.APIResources[i].Name == "rukpakconfigs" {
				found = &resources.APIResources[i]
			}
		}
		gomega.Expect(found).NotTo(gomega.BeNil(), "rukpakconfigs not in discovery")
		verbs := slices.Sorted(slices.Values(found.Verbs))
		gomega.Expect(verbs).To(gomega.Equal([]string{"get", "list", "watch"}))
		gomega.Expect(found.Namespaced).To(gomega.BeFalse())
		gomega.Expect(found.Kind).To(gomega.Equal("RukPakConfig"))
		gomega.Expect(found.SingularName).To(gomega.Equal("rukpakconfig"))
	})

	ginkgo.It("computes every state of the demo install", func() {
		c := getConfig(gomega.Default)
		diff := cmp.Diff(demoStatus, c.Status, cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime"), cmpopts.EquateEmpty())
		gomega.Expect(diff).To(gomega.BeEmpty(), "status (-want +got)")

		ns, err := kube.CoreV1().Namespaces().Get(context.Background(), "kube-system", metav1.GetOptions{})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(c.CreationTimestamp.Equal(&ns.CreationTimestamp)).To(gomega.BeTrue(), "creationTimestamp comes from the cluster")
		gomega.Expect(c.UID).NotTo(gomega.BeEmpty())
		gomega.Expect(c.OwnerReferences).To(gomega.BeEmpty())
		for _, cond := range c.Status.Conditions {
			gomega.Expect(cond.LastTransitionTime.IsZero()).To(gomega.BeFalse(), "condition %s has no lastTransitionTime", cond.Type)
		}
	})

	ginkgo.It("reports ready on /readyz once its sources are synced", func() {
		direct := rest.CopyConfig(restConfig)
		direct.Host = "https://127.0.0.1:" + cluster.PeriscopePort
		direct.TLSClientConfig.CAData = nil
		direct.TLSClientConfig.CAFile = filepath.Join(cluster.PKIDir, "periscope-ca.crt")
		client := kubernetes.NewForConfigOrDie(direct).Discovery().RESTClient()
		body, err := client.Get().AbsPath("/readyz").Param("verbose", "true").DoRaw(context.Background())
		gomega.Expect(err).NotTo(gomega.HaveOccurred(), string(body))
		gomega.Expect(string(body)).To(gomega.ContainSubstring("[+]periscope-sources-synced ok"))
	})

	ginkgo.It("prints a table with kubectl get, and class names with -o wide", func() {
		out, err := kubectl("get", "rukpakconfig")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		lines := strings.Split(strings.TrimSpace(out), "\n")
		gomega.Expect(lines).To(gomega.HaveLen(2), out)
		gomega.Expect(strings.Fields(lines[0])).To(gomega.Equal([]string{"NAME", "INSTALLED", "PROVISIONERS", "CLASSES", "MISSING", "AVAILABLE"}))
		gomega.Expect(strings.Fields(lines[1])).To(gomega.Equal([]string{"cluster", "true", "2/3", "5", "1", "False"}))

		out, err = kubectl("get", "rukpakconfig", "-o", "wide")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		lines = strings.Split(strings.TrimSpace(out), "\n")
		gomega.Expect(strings.Fields(lines[0])).To(gomega.Equal([]string{"NAME", "INSTALLED", "PROVISIONERS", "CLASSES", "MISSING", "AVAILABLE", "CLASS", "NAMES"}))
		gomega.Expect(strings.Fields(lines[1])).To(gomega.ContainElement(
			"acme-io-jsonnet,acme-io-kustomize(Missing),core-rukpak-io-helm(Disabled),core-rukpak-io-plain,core-rukpak-io-registry"))
	})

	ginkgo.It("is explained by kubectl explain from the published OpenAPI", func() {
		out, err := kubectl("explain", "rukpakconfig.status.classes")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(out).To(gomega.ContainSubstring("bundleFormat"))
		gomega.Expect(out).To(gomega.ContainSubstring("bundleDeployments"))
		gomega.Expect(out).To(gomega.ContainSubstring("Missing"))

		for _, path := range []string{"/openapi/v2", "/openapi/v3/apis/visibility.periscope.dev/v1alpha1"} {
			body, err := kube.Discovery().RESTClient().Get().AbsPath(path).DoRaw(context.Background())
			gomega.Expect(err).NotTo(gomega.HaveOccurred(), path)
			gomega.Expect(string(body)).To(gomega.ContainSubstring("dev.periscope.visibility.v1alpha1.RukPakConfig"), path)
		}
	})

	ginkgo.It("answers every write with 405 and changes nothing", func() {
		ctx := context.Background()
		before := getConfig(gomega.Default)
		client := dyn.Resource(rukpakConfigs)
		obj := &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "visibility.periscope.dev/v1alpha1", "kind": "RukPakConfig",
			"metadata": map[string]interface{}{"name": "cluster", "resourceVersion": before.ResourceVersion},
		}}
		writes := map[string]func() error{
			"create": func() error {
				o := obj.DeepCopy()
				o.SetName("other")
				o.SetResourceVersion("")
				_, err := client.Create(ctx, o, metav1.CreateOptions{})
				return err
			},
			"update": func() error { _, err := client.Update(ctx, obj, metav1.UpdateOptions{}); return err },
			"merge patch": func() error {
				_, err := client.Patch(ctx, "cluster", types.MergePatchType, []byte(`{"status":{"installed":false}}`), metav1.PatchOptions{})
				return err
			},
			"apply": func() error {
				_, err := client.Apply(ctx, "cluster", obj, metav1.ApplyOptions{FieldManager: "e2e"})
				return err
			},
			"delete":            func() error { return client.Delete(ctx, "cluster", metav1.DeleteOptions{}) },
			"delete collection": func() error { return client.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}) },
		}
		for name, write := range writes {
			err := write()
			gomega.Expect(apierrors.IsMethodNotSupported(err)).To(gomega.BeTrue(), "%s: got %v, want 405", name, err)
		}
		// There is no status subresource at all, as for any kube-apiserver resource without one.
		_, err := client.UpdateStatus(ctx, obj, metav1.UpdateOptions{})
		gomega.Expect(apierrors.IsNotFound(err)).To(gomega.BeTrue(), "update status: got %v, want 404", err)
		after := getConfig(gomega.Default)
		gomega.Expect(after.ResourceVersion).To(gomega.Equal(before.ResourceVersion))
		_, err = kubectl("delete", "rukpakconfig", "cluster")
		gomega.Expect(err).To(gomega.MatchError(gomega.ContainSubstring("MethodNotAllowed")))
	})

	ginkgo.It("is readable only with RBAC: 403 without it, allowed through periscope:cluster-reader", func() {
		ctx := context.Background()
		nobody := impersonating("e2e-nobody")
		_, err := nobody.VisibilityV1alpha1().RukPakConfigs().Get(ctx, "cluster", metav1.GetOptions{})
		gomega.Expect(apierrors.IsForbidden(err)).To(gomega.BeTrue(), "get: %v", err)
		_, err = nobody.VisibilityV1alpha1().RukPakConfigs().List(ctx, metav1.ListOptions{})
		gomega.Expect(apierrors.IsForbidden(err)).To(gomega.BeTrue(), "list: %v", err)
		_, err = nobody.VisibilityV1alpha1().RukPakConfigs().Watch(ctx, metav1.ListOptions{})
		gomega.Expect(apierrors.IsForbidden(err)).To(gomega.BeTrue(), "watch: %v", err)

		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "e2e-cluster-reader"},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "periscope:cluster-reader"},
			Subjects:   []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: "e2e-reader"}},
		}
		_, err = kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		ginkgo.DeferCleanup(func(ctx context.Context) {
			gomega.Expect(kube.RbacV1().ClusterRoleBindings().Delete(ctx, binding.Name, metav1.DeleteOptions{})).To(gomega.Succeed())
		})
		reader := impersonating("e2e-reader")
		gomega.Eventually(func(g gomega.Gomega) {
			list, err := reader.VisibilityV1alpha1().RukPakConfigs().List(ctx, metav1.ListOptions{})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(list.Items).To(gomega.HaveLen(1))
		}).Should(gomega.Succeed())
		_, err = kubectl("get", "rukpakconfig", "--as", "e2e-nobody")
		gomega.Expect(err).To(gomega.MatchError(gomega.ContainSubstring("Forbidden")))
	})

	ginkgo.It("shows a new row in kubectl get -w soon after a provisioner is scaled to 0", func() {
		session, err := gexec.Start(kubectlCommand("get", "rukpakconfig", "-w"), ginkgo.GinkgoWriter, ginkgo.GinkgoWriter)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		ginkgo.DeferCleanup(func() { session.Kill().Wait() })
		gomega.Eventually(session.Out).Should(gbytes.Say(`cluster\s+true\s+2/3\s+5\s+1\s+False`))

		patchDeployment("rukpak-system", "core", "", `{"spec":{"replicas":0}}`)
		ginkgo.DeferCleanup(func() {
			patchDeployment("rukpak-system", "core", "", `{"spec":{"replicas":1}}`)
			gomega.Eventually(func(g gomega.Gomega) {
				g.Expect(provisioner(getConfig(g), "rukpak-system", "core").State).To(gomega.Equal(v1alpha1.ProvisionerRunning))
			}).Should(gomega.Succeed())
		})
		gomega.Eventually(session.Out, 10*time.Second).Should(gbytes.Say(`cluster\s+true\s+1/3\s+5\s+1\s+False`))
		c := getConfig(gomega.Default)
		gomega.Expect(provisioner(c, "rukpak-system", "core").State).To(gomega.Equal(v1alpha1.ProvisionerDisabled))
		gomega.Expect(classOf(c, "core-rukpak-io-plain").State).To(gomega.Equal(v1alpha1.ClassDisabled))
	})

	ginkgo.It("delivers exactly the later changes to a watch started from a list's resourceVersion", func() {
		ctx := context.Background()
		list, err := periscope.VisibilityV1alpha1().RukPakConfigs().List(ctx, metav1.ListOptions{})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(list.ResourceVersion).NotTo(gomega.BeEmpty())

		helmState := func(g gomega.Gomega) v1alpha1.ProvisionerState {
			return provisioner(getConfig(g), "rukpak-system", "helm-provisioner").State
		}
		// One source write per step, each waited for, so that each is one change.
		patchDeployment("rukpak-system", "helm-provisioner", "", `{"spec":{"replicas":1}}`)
		gomega.Eventually(helmState).Should(gomega.Equal(v1alpha1.ProvisionerUnavailable))
		patchDeployment("rukpak-system", "helm-provisioner", "status", `{"status":{"replicas":1,"readyReplicas":1,"availableReplicas":1}}`)
		gomega.Eventually(helmState).Should(gomega.Equal(v1alpha1.ProvisionerRunning))
		patchDeployment("rukpak-system", "helm-provisioner", "", `{"spec":{"replicas":0}}`)
		gomega.Eventually(helmState).Should(gomega.Equal(v1alpha1.ProvisionerDisabled))
		ginkgo.DeferCleanup(func() {
			patchDeployment("rukpak-system", "helm-provisioner", "status", `{"status":{"replicas":0,"readyReplicas":0,"availableReplicas":0}}`)
			gomega.Eventually(func(g gomega.Gomega) {
				g.Expect(provisioner(getConfig(g), "rukpak-system", "helm-provisioner").ReadyReplicas).To(gomega.BeZero())
			}).Should(gomega.Succeed())
		})

		w, err := periscope.VisibilityV1alpha1().RukPakConfigs().Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		defer w.Stop()
		var got []string
		lastRV := list.ResourceVersion
		for len(got) < 3 {
			select {
			case ev, ok := <-w.ResultChan():
				gomega.Expect(ok).To(gomega.BeTrue(), "watch closed early")
				c := ev.Object.(*v1alpha1.RukPakConfig)
				got = append(got, fmt.Sprintf("%s %s", ev.Type, provisioner(c, "rukpak-system", "helm-provisioner").State))
				gomega.Expect(parseRV(c.ResourceVersion)).To(gomega.BeNumerically(">", parseRV(lastRV)), "resource versions increase")
				lastRV = c.ResourceVersion
			case <-time.After(10 * time.Second):
				ginkgo.Fail(fmt.Sprintf("timed out with events %v", got))
			}
		}
		gomega.Expect(got).To(gomega.Equal([]string{"MODIFIED Unavailable", "MODIFIED Running", "MODIFIED Disabled"}))
		gomega.Consistently(w.ResultChan(), 2*time.Second).ShouldNot(gomega.Receive(), "no duplicate or extra event")
		gomega.Expect(lastRV).To(gomega.Equal(getConfig(gomega.Default).ResourceVersion))
	})

	ginkgo.It("finds opted-in StatefulSets and DaemonSets in any namespace", func() {
		ctx := context.Background()
		labels := map[string]string{"app": "e2e-provisioner", "visibility.periscope.dev/provisioner": "true"}
		template := appsTemplate(labels)
		sts := &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Name: "kustomize-provisioner", Namespace: "acme-system", Labels: labels,
				Annotations: map[string]string{"visibility.periscope.dev/provisioner-classes": "acme-io-kustomize"}},
			Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template},
		}
		ds := &appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: "cue-provisioner", Namespace: "default", Labels: labels,
				Annotations: map[string]string{"visibility.periscope.dev/provisioner-classes": "acme-io-cue"}},
			Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template},
		}
		_, err := kube.AppsV1().StatefulSets(sts.Namespace).Create(ctx, sts, metav1.CreateOptions{})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		ginkgo.DeferCleanup(func(ctx context.Context) {
			gomega.Expect(kube.AppsV1().StatefulSets(sts.Namespace).Delete(ctx, sts.Name, metav1.DeleteOptions{})).To(gomega.Succeed())
		})
		_, err = kube.AppsV1().DaemonSets(ds.Namespace).Create(ctx, ds, metav1.CreateOptions{})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		ginkgo.DeferCleanup(func(ctx context.Context) {
			gomega.Expect(kube.AppsV1().DaemonSets(ds.Namespace).Delete(ctx, ds.Name, metav1.DeleteOptions{})).To(gomega.Succeed())
		})
		_, err = kube.AppsV1().StatefulSets(sts.Namespace).Patch(ctx, sts.Name, types.MergePatchType, []byte(`{"status":{"replicas":1,"readyReplicas":1}}`), metav1.PatchOptions{}, "status")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		_, err = kube.AppsV1().DaemonSets(ds.Namespace).Patch(ctx, ds.Name, types.MergePatchType, []byte(`{"status":{"desiredNumberScheduled":2,"numberReady":1,"currentNumberScheduled":2,"numberMisscheduled":0}}`), metav1.PatchOptions{}, "status")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())

		gomega.Eventually(func(g gomega.Gomega) {
			c := getConfig(g)
			kustomize := classOf(c, "acme-io-kustomize")
			g.Expect(kustomize).NotTo(gomega.BeNil())
			g.Expect(kustomize.State).To(gomega.Equal(v1alpha1.ClassAvailable))
			g.Expect(kustomize.Provisioner).To(gomega.Equal("acme-system/kustomize-provisioner"))
			p := provisioner(c, "default", "cue-provisioner")
			g.Expect(p).NotTo(gomega.BeNil())
			g.Expect(p.Kind).To(gomega.Equal(v1alpha1.WorkloadDaemonSet))
			g.Expect(p.State).To(gomega.Equal(v1alpha1.ProvisionerDegraded))
			g.Expect(p.Message).To(gomega.Equal("1 of 2 replicas ready"))
			available := meta.FindStatusCondition(c.Status.Conditions, "Available")
			g.Expect(available.Reason).To(gomega.Equal("ProvisionerDisabled"), "no class is Missing any more")
		}).Should(gomega.Succeed())
	})

	ginkgo.It("says installed: false without rukpak, and picks up a v1alpha2 install without restart", func() {
		ctx := context.Background()
		crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
		for _, name := range []string{"bundles.core.rukpak.io", "bundledeployments.core.rukpak.io"} {
			gomega.Expect(crds.Delete(ctx, name, metav1.DeleteOptions{})).To(gomega.Succeed())
		}
		ginkgo.DeferCleanup(restoreV1alpha1)
		gomega.Eventually(func(g gomega.Gomega) {
			c := getConfig(g)
			g.Expect(c.Status.Installed).To(gomega.BeFalse())
			available := meta.FindStatusCondition(c.Status.Conditions, "Available")
			g.Expect(available.Reason).To(gomega.Equal("RukPakNotInstalled"))
			for _, cl := range c.Status.Classes {
				g.Expect(cl.Bundles.Total+cl.BundleDeployments.Total).To(gomega.BeZero(), "class %s still counts bundles", cl.Name)
			}
		}, time.Minute).Should(gomega.Succeed())

		_, err := kubectl("apply", "--server-side", "-f", v1alpha2Dir())
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		_, err = kubectl("wait", "--for", "condition=Established", "--timeout", "60s", "crd/bundledeployments.core.rukpak.io")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		bd := &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "core.rukpak.io/v1alpha2", "kind": "BundleDeployment",
			"metadata": map[string]interface{}{"name": "podinfo-v2"},
			"spec": map[string]interface{}{
				"installNamespace":     "podinfo",
				"provisionerClassName": "core-rukpak-io-helm",
				"source":               map[string]interface{}{"type": "image", "image": map[string]interface{}{"ref": "quay.io/example/podinfo:v1"}},
			},
		}}
		bds := dyn.Resource(schema.GroupVersionResource{Group: "core.rukpak.io", Version: "v1alpha2", Resource: "bundledeployments"})
		gomega.Eventually(func() error { _, err := bds.Create(ctx, bd, metav1.CreateOptions{}); return err }).Should(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			c := getConfig(g)
			g.Expect(c.Status.Installed).To(gomega.BeTrue())
			helm := classOf(c, "core-rukpak-io-helm")
			g.Expect(helm.BundleDeployments).To(gomega.Equal(counts(1, 0, 0, 1)))
			g.Expect(helm.Bundles).To(gomega.Equal(counts(0, 0, 0, 0)), "v1alpha2 has no Bundle API")
		}, time.Minute).Should(gomega.Succeed())
	})
})

func v1alpha2Dir() string { return filepath.Join(cluster.CRDDir, "rukpak-v1alpha2") }

// restoreV1alpha1 puts back the v1alpha1 CRDs and the demo bundles for whatever runs next.
func restoreV1alpha1(ctx context.Context) {
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	err := crds.Delete(ctx, "bundledeployments.core.rukpak.io", metav1.DeleteOptions{})
	gomega.Expect(err == nil || apierrors.IsNotFound(err)).To(gomega.BeTrue(), "%v", err)
	gomega.Eventually(func() bool {
		_, err := crds.Get(ctx, "bundledeployments.core.rukpak.io", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, time.Minute).Should(gomega.BeTrue())
	files := []string{filepath.Join(cluster.CRDDir, "core.rukpak.io_bundles.yaml"), filepath.Join(cluster.CRDDir, "core.rukpak.io_bundledeployments.yaml")}
	if cluster.CRDSource != "upstream" {
		files = []string{filepath.Join(cluster.CRDDir, "rukpak-v1alpha1")}
	}
	for _, f := range files {
		_, err := kubectl("apply", "--server-side", "-f", f)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
	}
	_, err = kubectl("wait", "--for", "condition=Established", "--timeout", "60s", "crd/bundles.core.rukpak.io", "crd/bundledeployments.core.rukpak.io")
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	// The demo bundles went with the CRDs: put them back, with their statuses.
	gomega.Eventually(func() error {
		_, err := kubectl("get", "bundles")
		return err
	}, 30*time.Second).Should(gomega.Succeed())
	reloadDemo("demo::load_bundles")
	gomega.Eventually(func(g gomega.Gomega) {
		c := getConfig(g)
		g.Expect(classOf(c, "acme-io-kustomize")).NotTo(gomega.BeNil())
		g.Expect(classOf(c, "core-rukpak-io-plain").Bundles.Total).To(gomega.Equal(int32(2)))
	}, time.Minute).Should(gomega.Succeed())
}

func impersonating(user string) periscopeclient.Interface {
	cfg := rest.CopyConfig(restConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	return periscopeclient.NewForConfigOrDie(cfg)
}

func parseRV(rv string) uint64 {
	v, err := strconv.ParseUint(rv, 10, 64)
	gomega.ExpectWithOffset(1, err).NotTo(gomega.HaveOccurred())
	return v
}

func appsTemplate(labels map[string]string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: "registry.example.com/provisioner:v1"}}},
	}
}
