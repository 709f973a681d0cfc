// Package apiserver assembles Periscope's aggregated API server: the generic API server, the
// stores, the REST storages of the visibility.periscope.dev group and the controllers that
// keep the stores current.
package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
	"periscope.dev/periscope/pkg/controllers/clusterreadiness"
	"periscope.dev/periscope/pkg/controllers/readinessextension"
	"periscope.dev/periscope/pkg/controllers/rukpakconfig"
	"periscope.dev/periscope/pkg/extensions/evaluator"
	"periscope.dev/periscope/pkg/extensions/metrics"
	"periscope.dev/periscope/pkg/notify"
	clusterreadinessregistry "periscope.dev/periscope/pkg/registry/visibility/clusterreadiness"
	readinessextensionregistry "periscope.dev/periscope/pkg/registry/visibility/readinessextension"
	rukpakconfigregistry "periscope.dev/periscope/pkg/registry/visibility/rukpakconfig"
	"periscope.dev/periscope/pkg/rukpak"
	"periscope.dev/periscope/pkg/sources"
	"periscope.dev/periscope/pkg/store"
)

// ExtraConfig is Periscope's own configuration.
type ExtraConfig struct {
	// RukPakNamespace is where upstream rukpak's provisioner Deployments run.
	RukPakNamespace string
	// DiscoveryInterval is how often discovery is read to follow source CRDs.
	DiscoveryInterval time.Duration
	// Store configures every store (bookmark interval, event log and buffer sizes).
	Store store.Config
	// EmitEvents records an Event on a cluster object when its readiness changes.
	EmitEvents bool
	// LeaseNamespace holds the Lease that elects the replica recording events.
	LeaseNamespace string
	// Workers compute ClusterReadiness objects in parallel.
	Workers int
	// Extensions configures readiness extensions.
	Extensions ExtensionConfig
	// Kubernetes, Dynamic and Discovery read the sources.
	Kubernetes kubernetes.Interface
	Dynamic    dynamic.Interface
	Discovery  discovery.DiscoveryInterface
}

// ExtensionConfig configures readiness extensions.
type ExtensionConfig struct {
	// Namespace holds the registrations.
	Namespace string
	// Workers is the number of concurrent calls per extension.
	Workers int
	// Resync is how often a check is asked again without retryAfterSeconds.
	Resync time.Duration
	// DiscoveryInterval is how often discovery is called again.
	DiscoveryInterval time.Duration
}

// Config is the generic API server's configuration plus Periscope's.
type Config struct {
	GenericConfig *genericapiserver.RecommendedConfig
	ExtraConfig   ExtraConfig
}

type completedConfig struct {
	GenericConfig genericapiserver.CompletedConfig
	ExtraConfig   *ExtraConfig
}

// CompletedConfig is a Config with defaults filled in.
type CompletedConfig struct {
	*completedConfig
}

// Complete fills in defaults.
func (c *Config) Complete() CompletedConfig {
	return CompletedConfig{&completedConfig{
		GenericConfig: c.GenericConfig.Complete(),
		ExtraConfig:   &c.ExtraConfig,
	}}
}

// Server is a Periscope API server.
type Server struct {
	GenericAPIServer *genericapiserver.GenericAPIServer
}

// New builds the server: stores, REST storages, controllers (started by a post-start hook)
// and a readyz check that fails until every source has synced and the objects are computed.
func (c CompletedConfig) New() (*Server, error) {
	generic, err := c.GenericConfig.New("periscope-apiserver", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, fmt.Errorf("building the generic API server: %w", err)
	}
	extra := c.ExtraConfig

	rukpakStore := rukpakconfigregistry.NewStore(extra.Store)
	rukpakController := rukpakconfig.New(extra.RukPakNamespace, rukpakStore, func(ctx context.Context) (rukpakconfig.Identity, error) {
		return clusterIdentity(ctx, extra.Kubernetes)
	})
	dynamicSources := sources.NewDynamicSources(extra.Discovery, extra.Dynamic, rukpakconfig.SourceResources(), extra.DiscoveryInterval, rukpakController.Enqueue)
	workloads := sources.NewWorkloads(extra.Kubernetes, extra.RukPakNamespace, rukpak.ProvisionerLabel, rukpakController.Enqueue)
	rukpakController.SetSources(dynamicSources, workloads)

	readinessStore := clusterreadinessregistry.NewStore(extra.Store)
	var recorder *notify.Recorder
	var notifier clusterreadiness.Notifier
	if extra.EmitEvents {
		recorder = notify.New(extra.Kubernetes, extra.LeaseNamespace, "periscope-readiness-events")
		notifier = recorder
	}
	readinessController := clusterreadiness.New(readinessStore, notifier)
	readinessSources := sources.NewDynamicSources(extra.Discovery, extra.Dynamic, readinessController.SourceResources(), extra.DiscoveryInterval, readinessController.Resync)
	readinessController.SetSource(readinessSources)

	// Readiness extensions: the evaluator calls them off the request path and tells the
	// ClusterReadiness controller which cluster to recompute; the registration controller
	// follows the ConfigMaps and serves ReadinessExtension objects.
	metrics.Register()
	extensionStore := readinessextensionregistry.NewStore(extra.Store)
	var extensionController *readinessextension.Controller
	checkEvaluator := evaluator.New(evaluator.Config{
		Workers:         extra.Extensions.Workers,
		Resync:          extra.Extensions.Resync,
		NamespaceLabels: func(ns string) labels.Set { return extensionController.NamespaceLabels(ns) },
		OnResult:        readinessController.Enqueue,
		OnHealth:        func(name string) { extensionController.HealthChanged(name) },
	})
	var warner readinessextension.Warner
	if recorder != nil {
		warner = recorder
	}
	extensionController = readinessextension.New(readinessextension.Config{
		Namespace: extra.Extensions.Namespace, Client: extra.Kubernetes, Store: extensionStore,
		Evaluator: checkEvaluator, Warner: warner,
		OnChange: readinessController.EnqueueAll, OnNamespace: readinessController.EnqueueNamespace,
		DiscoveryInterval: extra.Extensions.DiscoveryInterval,
	})
	readinessController.SetChecker(checkEvaluator, extensionController.Synced)

	ready := func() error {
		if !rukpakController.Computed() || !readinessController.Synced() || !extensionController.Synced() {
			return errors.New("sources are not synced yet")
		}
		return nil
	}

	group := genericapiserver.NewDefaultAPIGroupInfo(v1alpha1.GroupName, Scheme, metav1.ParameterCodec, Codecs)
	group.VersionedResourcesStorageMap[v1alpha1.SchemeGroupVersion.Version] = map[string]rest.Storage{
		"rukpakconfigs":       rukpakconfigregistry.NewREST(rukpakStore, ready),
		"clusterreadinesses":  clusterreadinessregistry.NewREST(readinessStore, ready, clock.RealClock{}),
		"readinessextensions": readinessextensionregistry.NewREST(extensionStore, ready, clock.RealClock{}),
	}
	if err := generic.InstallAPIGroup(&group); err != nil {
		return nil, fmt.Errorf("installing %s: %w", v1alpha1.GroupName, err)
	}

	if err := generic.AddReadyzChecks(healthz.NamedCheck("periscope-sources-synced", func(*http.Request) error { return ready() })); err != nil {
		return nil, fmt.Errorf("adding the readyz check: %w", err)
	}

	generic.AddPostStartHookOrDie("periscope-controllers", func(ctx genericapiserver.PostStartHookContext) error {
		// The hook's context ends when the server stops.
		go dynamicSources.Run(ctx)
		workloads.Start(ctx)
		go rukpakController.Run(ctx)
		go readinessSources.Run(ctx)
		checkEvaluator.Start(ctx)
		go extensionController.Run(ctx, 2)
		go readinessController.Run(ctx, extra.Workers)
		if recorder != nil {
			go recorder.Run(ctx)
		}
		return nil
	})
	return &Server{GenericAPIServer: generic}, nil
}

// clusterIdentity reads the kube-system namespace, retrying until it is readable: its uid and
// creation time are the same for every replica and every restart.
func clusterIdentity(ctx context.Context, client kubernetes.Interface) (rukpakconfig.Identity, error) {
	var id rukpakconfig.Identity
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		ns, err := client.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
		if err != nil {
			klog.ErrorS(err, "Reading namespace kube-system; retrying")
			return false, nil
		}
		id = rukpakconfig.Identity{UID: ns.UID, Created: ns.CreationTimestamp}
		return true, nil
	})
	return id, err
}
