//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"periscope.dev/periscope/internal/testcerts"
	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
	"periscope.dev/periscope/pkg/extension"
)

var sveltosClusters = schema.GroupVersionResource{Group: "lib.projectsveltos.io", Version: "v1beta1", Resource: "sveltosclusters"}

const extensionNamespace = "periscope-system"

// extensionTestCluster creates a namespace labelled for the test's registrations and a ready
// SveltosCluster without add-ons in it; both are deleted afterwards.
func extensionTestCluster(ctx context.Context, prefix string) (namespace, name string) {
	ns, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: prefix + "-", Labels: map[string]string{"e2e.periscope.dev/extensions": prefix}}}, metav1.CreateOptions{})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	name = "c1"
	sc := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "lib.projectsveltos.io/v1beta1", "kind": "SveltosCluster",
		"metadata": map[string]interface{}{"namespace": ns.Name, "name": name, "labels": map[string]interface{}{"tier": "e2e"}},
		"spec":     map[string]interface{}{},
	}}
	_, err = dyn.Resource(sveltosClusters).Namespace(ns.Name).Create(ctx, sc, metav1.CreateOptions{})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	_, err = dyn.Resource(sveltosClusters).Namespace(ns.Name).Patch(ctx, name, types.MergePatchType,
		[]byte(`{"status":{"ready":true,"connectionStatus":"Healthy"}}`), metav1.PatchOptions{}, "status")
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ginkgo.DeferCleanup(func(ctx context.Context) {
		// The cluster first, so that other specs never see it while the namespace terminates.
		_ = dyn.Resource(sveltosClusters).Namespace(ns.Name).Delete(ctx, name, metav1.DeleteOptions{})
		gomega.Eventually(func(g gomega.Gomega) {
			_, err := periscope.VisibilityV1alpha1().ClusterReadinesses(ns.Name).Get(ctx, name, metav1.GetOptions{})
			g.Expect(apierrors.IsNotFound(err)).To(gomega.BeTrue())
		}).Should(gomega.Succeed())
		_ = kube.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})
	})
	return ns.Name, name
}

// register creates a registration ConfigMap and deletes it afterwards.
func register(ctx context.Context, name string, data map[string]string) {
	_, err := kube.CoreV1().ConfigMaps(extensionNamespace).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: extensionNamespace, Name: name,
			Labels: map[string]string{"visibility.periscope.dev/readiness-extension": "true"}},
		Data: data,
	}, metav1.CreateOptions{})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ginkgo.DeferCleanup(func(ctx context.Context) {
		err := kube.CoreV1().ConfigMaps(extensionNamespace).Delete(ctx, name, metav1.DeleteOptions{})
		if !apierrors.IsNotFound(err) {
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
		}
	})
}

func condition(conds []metav1.Condition, t string) metav1.Condition {
	if c := meta.FindStatusCondition(conds, t); c != nil {
		return *c
	}
	return metav1.Condition{Type: t}
}

type checkView struct {
	Extension, Handler, Reason string
	Ready                      bool
}

func checksOf(cr *v1alpha1.ClusterReadiness) []checkView {
	out := []checkView{}
	for _, c := range cr.Status.Checks {
		out = append(out, checkView{c.Extension, c.Handler, c.Reason, c.Ready})
	}
	return out
}

// testExtension serves extension handlers over TLS on loopback with a CA of its own.
type testExtension struct {
	url      string
	caBundle string
	server   *http.Server
}

func startTestExtension(handlers ...extension.HandlerSpec) *testExtension {
	ca, err := testcerts.NewCA("e2e-extension-ca")
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	serving, err := testcerts.NewServing(ca, "127.0.0.1", nil, []net.IP{net.ParseIP("127.0.0.1")})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())

	srv, err := extension.NewServer(handlers...)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	server := &http.Server{Handler: srv, ReadHeaderTimeout: 5 * time.Second, TLSConfig: &tls.Config{
		Certificates: []tls.Certificate{serving.TLS()}}}
	go func() { _ = server.ServeTLS(l, "", "") }()
	ginkgo.DeferCleanup(func() { _ = server.Close() })
	return &testExtension{
		url:      "https://" + l.Addr().String(),
		caBundle: base64.StdEncoding.EncodeToString(ca.CertPEM),
		server:   server,
	}
}

var _ = ginkgo.Describe("Readiness extensions", func() {
	ginkgo.It("lists the demo's example extension as discovered and healthy", func(ctx context.Context) {
		gomega.Eventually(func(g gomega.Gomega) {
			re, err := periscope.VisibilityV1alpha1().ReadinessExtensions().Get(ctx, "approval-extension", metav1.GetOptions{})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(condition(re.Status.Conditions, "Ready").Status).To(gomega.Equal(metav1.ConditionTrue))
			g.Expect(re.Status.Handlers).To(gomega.HaveLen(1))
			g.Expect(re.Status.Handlers[0].Name).To(gomega.Equal("approved"))
			g.Expect(re.Spec.ConfigMap).To(gomega.Equal("periscope-system/approval-extension"))
		}).Should(gomega.Succeed())
		out, err := kubectl("get", "readinessextensions")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(out).To(gomega.MatchRegexp(`approval-extension\s+True\s+\d/1\s+Ready`))
	})

	ginkgo.It("follows the example extension's answer, and drops the check when unregistered", func(ctx context.Context) {
		ns, name := extensionTestCluster(ctx, "ext-approval")
		caBundle := base64.StdEncoding.EncodeToString(mustRead(cluster.PKIDir + "/periscope-ca.crt"))
		svc, err := kube.CoreV1().Services(extensionNamespace).Get(ctx, "approval-extension", metav1.GetOptions{})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		port := svc.Spec.Ports[0].Port
		register(ctx, "approval-e2e", map[string]string{
			"clientConfig":      fmt.Sprintf("service: {namespace: periscope-system, name: approval-extension, port: %d}\ncaBundle: %s", port, caBundle),
			"namespaceSelector": "matchLabels: {e2e.periscope.dev/extensions: ext-approval}",
			"clusterSelector":   "matchLabels: {tier: e2e}",
			"settings":          "configMapName: approvals\nretryAfterSeconds: \"1\"",
		})

		ginkgo.By("answering not ready while nobody approved")
		gomega.Eventually(func(g gomega.Gomega) {
			cr := getReadiness(g, ns, name)
			g.Expect(checksOf(cr)).To(gomega.Equal([]checkView{{"approval-e2e", "approved", "NotReady", false}}))
			g.Expect(cr.Status.Checks[0].Message).To(gomega.ContainSubstring("approvals does not exist"))
			g.Expect(condition(cr.Status.Conditions, "Ready").Reason).To(gomega.Equal("ChecksFailed"))
			g.Expect(cr.Status.Ready).To(gomega.BeFalse())
		}).Should(gomega.Succeed())

		ginkgo.By("turning Ready when the approval appears")
		_, err = kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "approvals"},
			Data: map[string]string{name: "approved"}}, metav1.CreateOptions{})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		_, err = kubectl("wait", "--for", "condition=Ready", "clusterreadiness/"+name, "-n", ns, "--timeout", "30s")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		cr := getReadiness(gomega.Default, ns, name)
		gomega.Expect(checksOf(cr)).To(gomega.Equal([]checkView{{"approval-e2e", "approved", "Passed", true}}))
		gomega.Expect(condition(cr.Status.Conditions, "ChecksPassed").Reason).To(gomega.Equal("ChecksPassed"))

		ginkgo.By("turning not Ready when the approval is withdrawn")
		_, err = kube.CoreV1().ConfigMaps(ns).Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "approvals"},
			Data: map[string]string{name: "rejected"}}, metav1.UpdateOptions{})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Eventually(func(g gomega.Gomega) {
			g.Expect(checksOf(getReadiness(g, ns, name))).To(gomega.Equal([]checkView{{"approval-e2e", "approved", "NotReady", false}}))
		}).Should(gomega.Succeed())

		ginkgo.By("counting the calls on /metrics")
		gomega.Expect(periscopeMetricsText(ctx)).To(gomega.ContainSubstring(`periscope_extension_calls_total{extension="approval-e2e",handler="approved",outcome="Answered"}`))

		ginkgo.By("dropping the check when the registration is removed")
		gomega.Expect(kube.CoreV1().ConfigMaps(extensionNamespace).Delete(ctx, "approval-e2e", metav1.DeleteOptions{})).To(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			cr := getReadiness(g, ns, name)
			g.Expect(cr.Status.Checks).To(gomega.BeEmpty())
			g.Expect(condition(cr.Status.Conditions, "ChecksPassed").Reason).To(gomega.Equal("NoChecks"))
			g.Expect(cr.Status.Ready).To(gomega.BeTrue())
			_, err := periscope.VisibilityV1alpha1().ReadinessExtensions().Get(ctx, "approval-e2e", metav1.GetOptions{})
			g.Expect(apierrors.IsNotFound(err)).To(gomega.BeTrue())
		}).Should(gomega.Succeed())
	})

	ginkgo.It("blocks a cluster when a Fail extension dies, and lets it pass when the extension is Ignore", func(ctx context.Context) {
		ns, name := extensionTestCluster(ctx, "ext-dead")
		answer := func(context.Context, *extension.ClusterReadinessCheckRequest) (extension.Result, error) {
			return extension.Result{Ready: true, Message: "fine", RetryAfter: time.Second}, nil
		}
		ext := startTestExtension(
			extension.HandlerSpec{Name: "strict", TimeoutSeconds: 2, FailurePolicy: extension.FailurePolicyFail, Check: answer},
			extension.HandlerSpec{Name: "lenient", TimeoutSeconds: 2, FailurePolicy: extension.FailurePolicyIgnore, Check: answer},
		)
		register(ctx, "dying-e2e", map[string]string{
			"clientConfig":      fmt.Sprintf("url: %s\ncaBundle: %s", ext.url, ext.caBundle),
			"namespaceSelector": "matchLabels: {e2e.periscope.dev/extensions: ext-dead}",
		})
		gomega.Eventually(func(g gomega.Gomega) {
			cr := getReadiness(g, ns, name)
			g.Expect(checksOf(cr)).To(gomega.Equal([]checkView{{"dying-e2e", "lenient", "Passed", true}, {"dying-e2e", "strict", "Passed", true}}))
			g.Expect(cr.Status.Ready).To(gomega.BeTrue())
		}).Should(gomega.Succeed())

		ginkgo.By("stopping the extension")
		gomega.Expect(ext.server.Close()).To(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			cr := getReadiness(g, ns, name)
			g.Expect(checksOf(cr)).To(gomega.Equal([]checkView{{"dying-e2e", "lenient", "FailureIgnored", true}, {"dying-e2e", "strict", "ExtensionUnreachable", false}}))
			ready := condition(cr.Status.Conditions, "Ready")
			g.Expect(ready.Reason).To(gomega.Equal("ChecksFailed"))
			g.Expect(ready.Message).To(gomega.ContainSubstring("dying-e2e/strict"))
		}).Should(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			re, err := periscope.VisibilityV1alpha1().ReadinessExtensions().Get(ctx, "dying-e2e", metav1.GetOptions{})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(condition(re.Status.Conditions, "Ready").Reason).To(gomega.Equal("HandlersFailing"))
			for _, h := range re.Status.Handlers {
				g.Expect(h.Health).To(gomega.Equal(v1alpha1.HandlerFailing))
				g.Expect(h.LastError).To(gomega.ContainSubstring("Unreachable"))
			}
		}).Should(gomega.Succeed())
		out, err := kubectl("get", "readinessextension", "dying-e2e")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(out).To(gomega.MatchRegexp(`dying-e2e\s+False\s+0/2\s+HandlersFailing`))
	})

	ginkgo.It("reports a malformed registration on its object and as an Event, without affecting the others", func(ctx context.Context) {
		register(ctx, "malformed-e2e", map[string]string{"clientConfig": "urll: https://example.com"})
		gomega.Eventually(func(g gomega.Gomega) {
			re, err := periscope.VisibilityV1alpha1().ReadinessExtensions().Get(ctx, "malformed-e2e", metav1.GetOptions{})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			valid := condition(re.Status.Conditions, "Valid")
			g.Expect(valid.Status).To(gomega.Equal(metav1.ConditionFalse))
			g.Expect(valid.Reason).To(gomega.Equal("InvalidRegistration"))
			g.Expect(valid.Message).To(gomega.ContainSubstring(`unknown field "urll"`))
		}).Should(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			events, err := kube.EventsV1().Events(extensionNamespace).List(ctx, metav1.ListOptions{})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			var notes []string
			for _, e := range events.Items {
				if e.Regarding.Kind == "ConfigMap" && e.Regarding.Name == "malformed-e2e" && e.Reason == "InvalidRegistration" {
					notes = append(notes, e.Note)
				}
			}
			g.Expect(notes).To(gomega.ContainElement(gomega.ContainSubstring(`unknown field "urll"`)))
		}, time.Minute).Should(gomega.Succeed())
		re, err := periscope.VisibilityV1alpha1().ReadinessExtensions().Get(ctx, "approval-extension", metav1.GetOptions{})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(condition(re.Status.Conditions, "Ready").Status).To(gomega.Equal(metav1.ConditionTrue))
	})
})

func mustRead(path string) []byte {
	data, err := os.ReadFile(path)
	gomega.ExpectWithOffset(1, err).NotTo(gomega.HaveOccurred())
	return data
}

// periscopeMetricsText reads Periscope's /metrics directly.
func periscopeMetricsText(ctx context.Context) string {
	cfg := rest.CopyConfig(restConfig)
	cfg.Host = "https://127.0.0.1:" + cluster.PeriscopePort
	cfg.TLSClientConfig.CAData = nil
	cfg.TLSClientConfig.CAFile = cluster.PKIDir + "/periscope-ca.crt"
	body, err := kubernetes.NewForConfigOrDie(cfg).Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	gomega.ExpectWithOffset(1, err).NotTo(gomega.HaveOccurred())
	return strings.TrimSpace(string(body))
}
