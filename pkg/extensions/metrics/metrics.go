// Package metrics holds Periscope's own Prometheus metrics, served on /metrics with those of
// the generic API server. Counts and latencies live here rather than in object fields, so that
// objects change only when what they say changes.
package metrics

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

const namespace = "periscope"

var (
	// ExtensionCalls counts check calls by outcome: answered (Success or Failure) or the reason
	// the call failed (Timeout, Unreachable, TLSError, HTTPError, InvalidResponse).
	ExtensionCalls = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: namespace, Subsystem: "extension", Name: "calls_total",
		Help:           "Readiness extension check calls by extension, handler and outcome.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"extension", "handler", "outcome"})

	// ExtensionCallDuration is the latency of check calls.
	ExtensionCallDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Namespace: namespace, Subsystem: "extension", Name: "call_duration_seconds",
		Help:           "Latency of readiness extension check calls by extension and handler.",
		Buckets:        []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
		StabilityLevel: metrics.ALPHA,
	}, []string{"extension", "handler"})

	// ExtensionCallsSkipped counts checks answered from a failing handler's last error while
	// Periscope backs off from it, without a call.
	ExtensionCallsSkipped = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: namespace, Subsystem: "extension", Name: "calls_skipped_total",
		Help:           "Checks answered without a call while backing off from a failing handler.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"extension", "handler"})

	// ExtensionDiscoveries counts discovery calls by outcome (Success or the failure reason).
	ExtensionDiscoveries = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: namespace, Subsystem: "extension", Name: "discoveries_total",
		Help:           "Readiness extension discovery calls by extension and outcome.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"extension", "outcome"})

	// ClusterReadinessComputations counts computations of one cluster's readiness: the work a
	// source event causes.
	ClusterReadinessComputations = metrics.NewCounter(&metrics.CounterOpts{
		Namespace: namespace, Subsystem: "clusterreadiness", Name: "computations_total",
		Help:           "Computations of one cluster's ClusterReadiness.",
		StabilityLevel: metrics.ALPHA,
	})
)

var once sync.Once

// Register registers the metrics with the legacy registry that /metrics serves. Idempotent.
func Register() {
	once.Do(func() {
		legacyregistry.MustRegister(ExtensionCalls, ExtensionCallDuration, ExtensionCallsSkipped,
			ExtensionDiscoveries, ClusterReadinessComputations)
	})
}
