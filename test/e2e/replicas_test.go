//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
	periscopeclient "periscope.dev/periscope/pkg/generated/clientset/versioned"
	"periscope.dev/periscope/test/tcpproxy"
)

// replica is a Periscope process started by the test, stopped by its PID.
type replica struct {
	name       string
	port       int
	kubeconfig string // for the sources; authentication and authorization go direct
	cmd        *exec.Cmd
}

func freePort() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	gomega.ExpectWithOffset(2, err).NotTo(gomega.HaveOccurred())
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func (r *replica) start() {
	log, err := os.OpenFile(filepath.Join(cluster.LogsDir, r.name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	gomega.ExpectWithOffset(1, err).NotTo(gomega.HaveOccurred())
	r.cmd = exec.Command(cluster.PeriscopeBin,
		"--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(r.port),
		"--tls-cert-file", filepath.Join(cluster.PKIDir, "periscope.crt"), "--tls-private-key-file", filepath.Join(cluster.PKIDir, "periscope.key"),
		"--kubeconfig", r.kubeconfig,
		"--authentication-kubeconfig", cluster.PeriscopeKubeconfig, "--authorization-kubeconfig", cluster.PeriscopeKubeconfig,
		"--discovery-interval", "2s", "--v", "2")
	r.cmd.Stdout, r.cmd.Stderr = log, log
	gomega.ExpectWithOffset(1, r.cmd.Start()).To(gomega.Succeed())
	_ = log.Close()
}

func (r *replica) stop() {
	if r.cmd == nil || r.cmd.Process == nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = r.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = r.cmd.Process.Kill()
		<-done
	}
	r.cmd = nil
}

// direct returns a client that talks to this replica only, as the admin (client certificate).
func (r *replica) direct() (periscopeclient.Interface, *rest.Config) {
	cfg := rest.CopyConfig(restConfig)
	cfg.Host = fmt.Sprintf("https://127.0.0.1:%d", r.port)
	cfg.TLSClientConfig.CAData = nil
	cfg.TLSClientConfig.CAFile = filepath.Join(cluster.PKIDir, "periscope-ca.crt")
	cfg.Timeout = 10 * time.Second
	return periscopeclient.NewForConfigOrDie(cfg), cfg
}

func (r *replica) readyz(ctx context.Context) (string, error) {
	client, _ := r.direct()
	body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").Param("verbose", "true").DoRaw(ctx)
	return string(body), err
}

func (r *replica) waitReady() {
	gomega.EventuallyWithOffset(1, func() error { _, err := r.readyz(context.Background()); return err }, time.Minute).Should(gomega.Succeed())
}

// kubeconfigThrough writes a copy of Periscope's kubeconfig whose server is the proxy.
func kubeconfigThrough(p *tcpproxy.Proxy, name string) string {
	cfg, err := clientcmd.LoadFromFile(cluster.PeriscopeKubeconfig)
	gomega.ExpectWithOffset(1, err).NotTo(gomega.HaveOccurred())
	for _, c := range cfg.Clusters {
		c.Server = fmt.Sprintf("https://127.0.0.1:%d", p.Port())
	}
	path := filepath.Join(cluster.LogsDir, "..", name+".kubeconfig")
	gomega.ExpectWithOffset(1, clientcmd.WriteToFile(*cfg, path)).To(gomega.Succeed())
	return path
}

// routeAPIServiceTo points the Service and the APIService at a port on loopback.
func routeAPIServiceTo(ctx context.Context, port int) {
	_, err := kube.CoreV1().Services("periscope-system").Patch(ctx, "periscope", types.JSONPatchType,
		[]byte(fmt.Sprintf(`[{"op":"replace","path":"/spec/ports/0/port","value":%d}]`, port)), metav1.PatchOptions{})
	gomega.ExpectWithOffset(1, err).NotTo(gomega.HaveOccurred())
	_, err = kubectl("patch", "apiservice", "v1alpha1.visibility.periscope.dev", "--type", "merge", "-p", fmt.Sprintf(`{"spec":{"service":{"port":%d}}}`, port))
	gomega.ExpectWithOffset(1, err).NotTo(gomega.HaveOccurred())
	gomega.EventuallyWithOffset(1, func() error {
		_, err := periscope.VisibilityV1alpha1().ClusterReadinesses("team-a").Get(ctx, "staging-1", metav1.GetOptions{})
		return err
	}, time.Minute).Should(gomega.Succeed())
}

var _ = ginkgo.Describe("Two replicas", ginkgo.Ordered, func() {
	var b, c *replica
	var front, apiProxy *tcpproxy.Proxy

	ginkgo.BeforeAll(func(ctx context.Context) {
		var err error
		// Replica c reads its sources through a proxy to kube-apiserver that the test can cut.
		apiProxy, err = tcpproxy.Start(hostOf(restConfig.Host))
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		ginkgo.DeferCleanup(apiProxy.Close)
		b = &replica{name: "periscope-b", port: freePort(), kubeconfig: cluster.PeriscopeKubeconfig}
		c = &replica{name: "periscope-c", port: freePort(), kubeconfig: kubeconfigThrough(apiProxy, "periscope-c")}
		for _, r := range []*replica{b, c} {
			r.start()
			ginkgo.DeferCleanup(r.stop)
		}
		b.waitReady()
		c.waitReady()
		front, err = tcpproxy.Start(fmt.Sprintf("127.0.0.1:%d", b.port), fmt.Sprintf("127.0.0.1:%d", c.port))
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		ginkgo.DeferCleanup(front.Close)
		routeAPIServiceTo(ctx, front.Port())
		ginkgo.DeferCleanup(func(ctx context.Context) {
			port, err := strconv.Atoi(cluster.PeriscopePort)
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			routeAPIServiceTo(ctx, port)
		})
	})

	ginkgo.It("answers a resource version issued by the other replica with 410 Gone", func(ctx context.Context) {
		clientB, _ := b.direct()
		clientC, _ := c.direct()
		list, err := clientB.VisibilityV1alpha1().ClusterReadinesses("").List(ctx, metav1.ListOptions{})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		_, err = clientC.VisibilityV1alpha1().ClusterReadinesses("").Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		gomega.Expect(apierrors.IsResourceExpired(err) || apierrors.IsGone(err)).To(gomega.BeTrue(), "watch: %v", err)
		_, err = clientC.VisibilityV1alpha1().ClusterReadinesses("").List(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		gomega.Expect(apierrors.IsResourceExpired(err) || apierrors.IsGone(err)).To(gomega.BeTrue(), "list: %v", err)
		// Both replicas compute the same objects, identity and transition times included.
		listC, err := clientC.VisibilityV1alpha1().ClusterReadinesses("").List(ctx, metav1.ListOptions{})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		strip := func(items []v1alpha1.ClusterReadiness) []v1alpha1.ClusterReadiness {
			out := make([]v1alpha1.ClusterReadiness, len(items))
			for i, it := range items {
				it.ResourceVersion = ""
				out[i] = it
			}
			return out
		}
		gomega.Expect(cmp.Diff(strip(list.Items), strip(listC.Items))).To(gomega.BeEmpty(), "replicas disagree (-b +c)")
	})

	ginkgo.It("keeps an informer through the replicas equal to the truth while they restart, missing no Ready transition", func(ctx context.Context) {
		var mu sync.Mutex
		var seen []bool
		record := func(obj interface{}) {
			if cr, ok := obj.(*v1alpha1.ClusterReadiness); ok && cr.Namespace == "team-a" && cr.Name == "staging-1" {
				mu.Lock()
				if len(seen) == 0 || seen[len(seen)-1] != cr.Status.Ready {
					seen = append(seen, cr.Status.Ready)
				}
				mu.Unlock()
			}
		}
		inf := cache.NewSharedIndexInformerWithOptions(readinessListWatch(periscope), &v1alpha1.ClusterReadiness{}, cache.SharedIndexInformerOptions{})
		_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: record, UpdateFunc: func(_, o interface{}) { record(o) }})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		ictx, cancel := context.WithCancel(ctx)
		defer cancel()
		go inf.RunWithContext(ictx)
		gomega.Eventually(inf.HasSynced, 30*time.Second).Should(gomega.BeTrue())
		cached := func() bool {
			item, ok, _ := inf.GetStore().GetByKey("team-a/staging-1")
			return ok && item.(*v1alpha1.ClusterReadiness).Status.Ready
		}

		ginkgo.DeferCleanup(func() { setFeatures("team-a", "observability-sveltos-staging-1", helm("Provisioning")) })
		want := []bool{false}
		for i, r := range []*replica{b, c, b, c} {
			ready := i%2 == 0
			r.stop() // its connections drop; clients resume on the other replica (410, relist)
			front.CloseAll()
			if ready {
				setFeatures("team-a", "observability-sveltos-staging-1", helm("Provisioned"))
			} else {
				setFeatures("team-a", "observability-sveltos-staging-1", helm("Provisioning"))
			}
			want = append(want, ready)
			gomega.Eventually(cached, time.Minute).Should(gomega.Equal(ready), "restart %d", i)
			r.start()
			r.waitReady()
		}
		mu.Lock()
		gomega.Expect(seen).To(gomega.Equal(want), "Ready values the informer saw")
		mu.Unlock()

		// The cache ends equal to the truth.
		gomega.Eventually(func(g gomega.Gomega) {
			truth, err := periscope.VisibilityV1alpha1().ClusterReadinesses("").List(ctx, metav1.ListOptions{})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(len(inf.GetStore().List())).To(gomega.Equal(len(truth.Items)))
			for _, t := range truth.Items {
				item, ok, _ := inf.GetStore().GetByKey(t.Namespace + "/" + t.Name)
				g.Expect(ok).To(gomega.BeTrue(), t.Name)
				g.Expect(cmp.Diff(t.Status, item.(*v1alpha1.ClusterReadiness).Status)).To(gomega.BeEmpty(), t.Name)
			}
		}, time.Minute).Should(gomega.Succeed())
	}, ginkgo.NodeTimeout(5*time.Minute))

	ginkgo.It("is not ready, and answers 429, while it cannot reach its sources; then converges", func(ctx context.Context) {
		// Cut replica c off kube-apiserver (sources only), restart it: it must not serve.
		apiProxy.Block(true)
		apiProxy.CloseAll()
		c.stop()
		c.start()
		clientC, _ := c.direct()
		gomega.Eventually(func() string { body, _ := c.readyz(ctx); return body }, 30*time.Second).Should(gomega.ContainSubstring("[-]periscope-sources-synced failed"))
		// Requests are refused with 429 (once the replica has loaded the client CA that
		// authenticates the admin certificate), never answered from an empty store.
		// client-go retries a 429 by itself: ask once, without retries, to see it.
		gomega.Eventually(func() error {
			return clientC.Discovery().RESTClient().Get().AbsPath("/apis/visibility.periscope.dev/v1alpha1/namespaces/team-a/clusterreadinesses/staging-1").
				MaxRetries(0).Do(ctx).Error()
		}, 30*time.Second).Should(gomega.Satisfy(apierrors.IsTooManyRequests))
		gomega.Consistently(func() error { _, err := c.readyz(ctx); return err }, 3*time.Second).ShouldNot(gomega.Succeed())

		// A change made while it is cut off is there once it reconnects.
		failed := helm("Failed")
		failed["failureMessage"] = "made during the outage"
		setFeatures("team-a", "observability-sveltos-staging-1", failed)
		ginkgo.DeferCleanup(func() { setFeatures("team-a", "observability-sveltos-staging-1", helm("Provisioning")) })
		apiProxy.Block(false)
		c.waitReady()
		gomega.Eventually(func(g gomega.Gomega) {
			cr, err := clientC.VisibilityV1alpha1().ClusterReadinesses("team-a").Get(ctx, "staging-1", metav1.GetOptions{})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(cr.Status.Profiles[0].Message).To(gomega.Equal("Helm: made during the outage"))
		}, time.Minute).Should(gomega.Succeed())

		// An outage under a running replica: connections cut, refused for a while, restored.
		apiProxy.Block(true)
		apiProxy.CloseAll()
		setFeatures("team-a", "observability-sveltos-staging-1", helm("Provisioned"))
		time.Sleep(5 * time.Second)
		apiProxy.Block(false)
		gomega.Eventually(func(g gomega.Gomega) {
			cr, err := clientC.VisibilityV1alpha1().ClusterReadinesses("team-a").Get(ctx, "staging-1", metav1.GetOptions{})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(cr.Status.Ready).To(gomega.BeTrue())
		}, 90*time.Second).Should(gomega.Succeed())
	}, ginkgo.NodeTimeout(5*time.Minute))
})

func hostOf(url string) string {
	for _, prefix := range []string{"https://", "http://"} {
		if len(url) > len(prefix) && url[:len(prefix)] == prefix {
			return url[len(prefix):]
		}
	}
	return url
}
