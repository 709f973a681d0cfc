//go:build e2e

package e2e

import (
	"bufio"
	"context"

	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	periscopeclient "periscope.dev/periscope/pkg/generated/clientset/versioned"
)

// loadSize is the load of the test: reduced in make test, the full size with
// E2E_LOAD=full (500 watchers, 50 lists a second, 60 seconds).
type loadSize struct {
	watchers       int
	listsPerSecond int
	duration       time.Duration
}

func currentLoad() loadSize {
	if os.Getenv("E2E_LOAD") == "full" {
		return loadSize{watchers: 500, listsPerSecond: 50, duration: 60 * time.Second}
	}
	return loadSize{watchers: 100, listsPerSecond: 10, duration: 15 * time.Second}
}

// periscopeMetrics reads the goroutine count and the live heap (after a collection) straight
// from the Periscope process behind the APIService (as the admin).
func periscopeMetrics(ctx context.Context) (goroutines, heapBytes float64) {
	cfg := rest.CopyConfig(restConfig)
	cfg.Host = "https://127.0.0.1:" + cluster.PeriscopePort
	cfg.TLSClientConfig.CAData = nil
	cfg.TLSClientConfig.CAFile = filepath.Join(cluster.PKIDir, "periscope-ca.crt")
	rc := kubernetes.NewForConfigOrDie(cfg).Discovery().RESTClient()
	// The heap profile endpoint runs a garbage collection first (gc=1), so that the heap read
	// next is what is live, not garbage waiting for the next cycle.
	_, err := rc.Get().AbsPath("/debug/pprof/heap").Param("gc", "1").DoRaw(ctx)
	gomega.ExpectWithOffset(1, err).NotTo(gomega.HaveOccurred())
	body, err := rc.Get().AbsPath("/metrics").DoRaw(ctx)
	gomega.ExpectWithOffset(1, err).NotTo(gomega.HaveOccurred())
	scanner := bufio.NewScanner(strings.NewReader(string(body)))
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		f := strings.Fields(scanner.Text())
		if len(f) != 2 {
			continue
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "go_goroutines":
			goroutines = v
		case "go_memstats_heap_alloc_bytes":
			heapBytes = v
		}
	}
	gomega.ExpectWithOffset(1, goroutines).To(gomega.BeNumerically(">", 0), "go_goroutines missing from /metrics")
	return goroutines, heapBytes
}

var _ = ginkgo.Describe("Load on loopback", func() {
	ginkgo.It("serves concurrent watchers and lists while sources change, without errors or leaks", func(ctx context.Context) {
		load := currentLoad()
		ginkgo.GinkgoWriter.Printf("load: %d watchers, %d lists/s, %s\n", load.watchers, load.listsPerSecond, load.duration)

		// Watchers share a few connections, as real clients do.
		cfg := rest.CopyConfig(restConfig)
		cfg.QPS, cfg.Burst = -1, -1
		client := periscopeclient.NewForConfigOrDie(cfg)

		// Warm up first, so that the connections between kube-apiserver and Periscope exist
		// before the baseline is taken: growth after the load is then what the load left.
		for i := 0; i < 20; i++ {
			w, err := client.VisibilityV1alpha1().ClusterReadinesses("").Watch(ctx, metav1.ListOptions{})
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			_, err = client.VisibilityV1alpha1().ClusterReadinesses("").List(ctx, metav1.ListOptions{})
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			w.Stop()
		}
		time.Sleep(3 * time.Second)
		g0, h0 := periscopeMetrics(ctx)
		lctx, stop := context.WithCancel(ctx)
		defer stop()
		var watchErrors, listErrors, lists atomic.Int64
		received := make([]atomic.Int64, load.watchers)
		var wg sync.WaitGroup
		for i := 0; i < load.watchers; i++ {
			w, err := client.VisibilityV1alpha1().ClusterReadinesses("team-a").Watch(lctx, metav1.ListOptions{FieldSelector: "metadata.name=staging-1", ResourceVersion: "0"})
			gomega.Expect(err).NotTo(gomega.HaveOccurred(), "watcher %d", i)
			wg.Add(1)
			go func(i int, w watch.Interface) {
				defer wg.Done()
				defer w.Stop()
				for {
					select {
					case ev, ok := <-w.ResultChan():
						if !ok {
							if lctx.Err() == nil {
								watchErrors.Add(1)
							}
							return
						}
						if ev.Type == watch.Error {
							watchErrors.Add(1)
							return
						}
						received[i].Add(1)
					case <-lctx.Done():
						return
					}
				}
			}(i, w)
		}

		// Lists at a steady rate, and a source change every half second.
		ticker := time.NewTicker(time.Second / time.Duration(load.listsPerSecond))
		defer ticker.Stop()
		changes := 0
		changeTicker := time.NewTicker(500 * time.Millisecond)
		defer changeTicker.Stop()
		ginkgo.DeferCleanup(func() { setFeatures("team-a", "observability-sveltos-staging-1", helm("Provisioning")) })
		end := time.After(load.duration)
	loop:
		for {
			select {
			case <-ticker.C:
				go func() {
					if _, err := client.VisibilityV1alpha1().ClusterReadinesses("").List(lctx, metav1.ListOptions{}); err != nil && lctx.Err() == nil {
						listErrors.Add(1)
					}
					lists.Add(1)
				}()
			case <-changeTicker.C:
				changes++
				status := "Provisioning"
				if changes%2 == 1 {
					status = "Provisioned"
				}
				setFeatures("team-a", "observability-sveltos-staging-1", helm(status))
			case <-end:
				break loop
			}
		}
		// Every watcher gets the initial event and one per change (the last may be in flight).
		gomega.Eventually(func() int {
			lagging := 0
			for i := range received {
				if received[i].Load() < int64(1+changes) {
					lagging++
				}
			}
			return lagging
		}, 30*time.Second).Should(gomega.BeZero(), "watchers that missed events")
		stop()
		wg.Wait()
		gomega.Expect(watchErrors.Load()).To(gomega.BeZero(), "watch errors")
		gomega.Expect(listErrors.Load()).To(gomega.BeZero(), "list errors")
		ginkgo.GinkgoWriter.Printf("%d lists, %d changes, each watcher got %d events\n", lists.Load(), changes, received[0].Load())

		// Once the load is gone, Periscope's goroutines and heap come back near where they were.
		gomega.Eventually(func(g gomega.Gomega) {
			g1, h1 := periscopeMetrics(ctx)
			ginkgo.GinkgoWriter.Printf("goroutines %v -> %v, heap %.1f MiB -> %.1f MiB\n", g0, g1, h0/(1<<20), h1/(1<<20))
			// Connections between kube-apiserver and Periscope may stay pooled; a leak of even
			// one goroutine per watcher would exceed this.
			g.Expect(g1).To(gomega.BeNumerically("<=", g0+float64(load.watchers/2)), "goroutines left behind")
			g.Expect(h1).To(gomega.BeNumerically("<=", h0*2+32<<20), "heap growth")
		}, time.Minute, 2*time.Second).Should(gomega.Succeed())
	}, ginkgo.NodeTimeout(5*time.Minute))
})
