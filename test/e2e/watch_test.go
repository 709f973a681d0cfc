//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"sync/atomic"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
	periscopeclient "periscope.dev/periscope/pkg/generated/clientset/versioned"
)

// countingListWatch counts list calls: an informer in WatchList mode never lists.
type countingListWatch struct {
	*cache.ListWatch
	lists *atomic.Int32
}

// legacyListWatch opts its informer out of WatchList, without touching the process-wide
// feature gate: client-go checks for this method.
type legacyListWatch struct{ countingListWatch }

func (legacyListWatch) IsWatchListSemanticsUnSupported() bool { return true }

func readinessListWatch(client periscopeclient.Interface) countingListWatch {
	lists := &atomic.Int32{}
	return countingListWatch{lists: lists, ListWatch: &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			lists.Add(1)
			return client.VisibilityV1alpha1().ClusterReadinesses("").List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return client.VisibilityV1alpha1().ClusterReadinesses("").Watch(ctx, opts)
		},
	}}
}

func rukpakListWatch(client periscopeclient.Interface) countingListWatch {
	lists := &atomic.Int32{}
	return countingListWatch{lists: lists, ListWatch: &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			lists.Add(1)
			return client.VisibilityV1alpha1().RukPakConfigs().List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return client.VisibilityV1alpha1().RukPakConfigs().Watch(ctx, opts)
		},
	}}
}

func cacheKeys(inf cache.SharedIndexInformer) []string {
	keys := inf.GetStore().ListKeys()
	sort.Strings(keys)
	return keys
}

var _ = ginkgo.Describe("Watch", func() {
	ginkgo.It("runs in WatchList mode by default in client-go v0.37", func() {
		gomega.Expect(clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient)).To(gomega.BeTrue(),
			"the WatchListClient gate is off in this environment, so the WatchList cases below would test nothing new")
	})

	for _, mode := range []struct {
		name      string
		watchList bool
	}{{"WatchListClient on", true}, {"WatchListClient off", false}} {
		ginkgo.It(fmt.Sprintf("syncs client-go shared informers of both resources and follows changes (%s)", mode.name), func(ctx context.Context) {
			for _, r := range []struct {
				lw      countingListWatch
				example runtime.Object
				want    []string
			}{
				{readinessListWatch(periscope), &v1alpha1.ClusterReadiness{}, []string{"team-a/prod-1", "team-a/prod-2", "team-a/staging-1", "team-b/dev-1", "team-b/edge-1"}},
				{rukpakListWatch(periscope), &v1alpha1.RukPakConfig{}, []string{"cluster"}},
			} {
				var lw cache.ListerWatcher = r.lw
				if !mode.watchList {
					lw = legacyListWatch{r.lw}
				}
				inf := cache.NewSharedIndexInformerWithOptions(lw, r.example, cache.SharedIndexInformerOptions{})
				ictx, cancel := context.WithCancel(ctx)
				ginkgo.DeferCleanup(cancel)
				go inf.RunWithContext(ictx)
				gomega.Eventually(inf.HasSynced, 20*time.Second).Should(gomega.BeTrue(), "the informer never synced: was the initial-events-end bookmark sent?")
				gomega.Expect(cacheKeys(inf)).To(gomega.Equal(r.want))
				if mode.watchList {
					gomega.Expect(r.lw.lists.Load()).To(gomega.BeZero(), "a WatchList informer listed")
				} else {
					gomega.Expect(r.lw.lists.Load()).To(gomega.BeNumerically(">=", 1))
				}
			}
		}, ginkgo.NodeTimeout(2*time.Minute))
	}

	ginkgo.It("follows a change in a synced informer, in WatchList mode", func(ctx context.Context) {
		lw := readinessListWatch(periscope)
		inf := cache.NewSharedIndexInformerWithOptions(lw, &v1alpha1.ClusterReadiness{}, cache.SharedIndexInformerOptions{})
		ictx, cancel := context.WithCancel(ctx)
		ginkgo.DeferCleanup(cancel)
		go inf.RunWithContext(ictx)
		gomega.Eventually(inf.HasSynced, 20*time.Second).Should(gomega.BeTrue())

		reason := func() string {
			item, ok, err := inf.GetStore().GetByKey("team-a/staging-1")
			if err != nil || !ok {
				return ""
			}
			return meta.FindStatusCondition(item.(*v1alpha1.ClusterReadiness).Status.Conditions, "Ready").Reason
		}
		gomega.Expect(reason()).To(gomega.Equal("AddonsProvisioning"))
		failed := helm("Failed")
		failed["failureMessage"] = "boom"
		setFeatures("team-a", "observability-sveltos-staging-1", failed)
		ginkgo.DeferCleanup(func() { setFeatures("team-a", "observability-sveltos-staging-1", helm("Provisioning")) })
		gomega.Eventually(reason, 10*time.Second).Should(gomega.Equal("AddonsFailed"))
	}, ginkgo.NodeTimeout(time.Minute))

	ginkgo.It("answers resource versions it cannot serve with 410 or 400, through kube-apiserver", func(ctx context.Context) {
		list, err := periscope.VisibilityV1alpha1().ClusterReadinesses("").List(ctx, metav1.ListOptions{})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		rv := parseRV(list.ResourceVersion)
		foreign := fmt.Sprint((rv>>32+1)<<32 | 5) // another epoch: another replica or an earlier process

		_, err = periscope.VisibilityV1alpha1().ClusterReadinesses("").Watch(ctx, metav1.ListOptions{ResourceVersion: foreign})
		gomega.Expect(apierrors.IsResourceExpired(err) || apierrors.IsGone(err)).To(gomega.BeTrue(), "watch from a foreign RV: %v", err)
		_, err = periscope.VisibilityV1alpha1().ClusterReadinesses("").List(ctx, metav1.ListOptions{ResourceVersion: foreign, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		gomega.Expect(apierrors.IsResourceExpired(err) || apierrors.IsGone(err)).To(gomega.BeTrue(), "exact list at a foreign RV: %v", err)
		_, err = periscope.VisibilityV1alpha1().ClusterReadinesses("").Watch(ctx, metav1.ListOptions{ResourceVersion: "not-a-number"})
		gomega.Expect(apierrors.IsBadRequest(err)).To(gomega.BeTrue(), "malformed RV: %v", err)
		_, err = periscope.VisibilityV1alpha1().ClusterReadinesses("").List(ctx, metav1.ListOptions{Limit: 2, Continue: "garbage"})
		gomega.Expect(apierrors.IsBadRequest(err)).To(gomega.BeTrue(), "malformed continue: %v", err)

		// Pages of a paginated list are consistent and cover everything once.
		var names []string
		var firstRV string
		opts := metav1.ListOptions{Limit: 2}
		for {
			page, err := periscope.VisibilityV1alpha1().ClusterReadinesses("").List(ctx, opts)
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			for _, i := range page.Items {
				names = append(names, i.Namespace+"/"+i.Name)
			}
			if firstRV == "" {
				firstRV = page.ResourceVersion
			}
			gomega.Expect(page.ResourceVersion).To(gomega.Equal(firstRV), "every page is served from the first page's version")
			if page.Continue == "" {
				break
			}
			opts.Continue = page.Continue
		}
		gomega.Expect(names).To(gomega.Equal([]string{"team-a/prod-1", "team-a/prod-2", "team-a/staging-1", "team-b/dev-1", "team-b/edge-1"}))
	})

	ginkgo.It("serves Table output on watches, also with -o wide", func() {
		session, err := gexec.Start(kubectlCommand("get", "rukpakconfig", "-w", "-o", "wide"), ginkgo.GinkgoWriter, ginkgo.GinkgoWriter)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		ginkgo.DeferCleanup(func() { session.Kill().Wait() })
		gomega.Eventually(session.Out).Should(gbytes.Say(`CLASS NAMES`))
		gomega.Eventually(session.Out).Should(gbytes.Say(`acme-io-kustomize\(Missing\)`))
	})

	ginkgo.It("rejects unauthenticated requests and headers forged without the front-proxy certificate", func(ctx context.Context) {
		anonymous := rest.AnonymousClientConfig(restConfig)
		_, err := periscopeclient.NewForConfigOrDie(anonymous).VisibilityV1alpha1().RukPakConfigs().Get(ctx, "cluster", metav1.GetOptions{})
		gomega.Expect(apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err)).To(gomega.BeTrue(), "anonymous through kube-apiserver: %v", err)

		// Straight to Periscope's port, claiming to be an admin in request headers, with no
		// client certificate: the headers must not be trusted.
		ca, err := os.ReadFile(filepath.Join(cluster.PKIDir, "periscope-ca.crt"))
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		pool := x509.NewCertPool()
		gomega.Expect(pool.AppendCertsFromPEM(ca)).To(gomega.BeTrue())
		client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "localhost"}}}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://127.0.0.1:"+cluster.PeriscopePort+"/apis/visibility.periscope.dev/v1alpha1/rukpakconfigs", nil)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		req.Header.Set("X-Remote-User", "admin")
		req.Header.Set("X-Remote-Group", "system:masters")
		resp, err := client.Do(req)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		defer resp.Body.Close()
		gomega.Expect(resp.StatusCode).To(gomega.BeElementOf(http.StatusUnauthorized, http.StatusForbidden), "forged headers were trusted")
	})
})
