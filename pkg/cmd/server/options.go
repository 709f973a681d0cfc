// Package server holds the command-line options of periscope-apiserver and runs it.
package server

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	netutils "k8s.io/utils/net"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
	"periscope.dev/periscope/pkg/apiserver"
	generatedopenapi "periscope.dev/periscope/pkg/generated/openapi"
	"periscope.dev/periscope/pkg/store"
)

// Options are periscope-apiserver's flags.
type Options struct {
	// Recommended carries serving, delegated authentication and authorization, audit and the
	// kubeconfig. It has no etcd and no admission: nothing is stored and nothing is written.
	Recommended *genericoptions.RecommendedOptions

	RukPakNamespace   string
	DiscoveryInterval time.Duration
	BookmarkInterval  time.Duration
	EventLogSize      int
	WatcherBuffer     int
	EmitEvents        bool
	LeaseNamespace    string
	Workers           int

	ExtensionNamespace         string
	ExtensionWorkers           int
	ExtensionResync            time.Duration
	ExtensionDiscoveryInterval time.Duration
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	o := &Options{
		Recommended:       genericoptions.NewRecommendedOptions("", apiserver.Codecs.LegacyCodec(v1alpha1.SchemeGroupVersion)),
		RukPakNamespace:   "rukpak-system",
		DiscoveryInterval: 5 * time.Second,
		BookmarkInterval:  30 * time.Second,
		EventLogSize:      10000,
		WatcherBuffer:     1000,
		EmitEvents:        true,
		LeaseNamespace:    "periscope-system",
		Workers:           2,

		ExtensionNamespace:         "periscope-system",
		ExtensionWorkers:           4,
		ExtensionResync:            5 * time.Minute,
		ExtensionDiscoveryInterval: time.Minute,
	}
	o.Recommended.Etcd = nil
	o.Recommended.Admission = nil
	// kube-apiserver already applies priority and fairness before proxying to us, and doing it
	// again would need read access to the flowcontrol API.
	o.Recommended.Features.EnablePriorityAndFairness = false
	return o
}

// NewCommand returns the periscope-apiserver command.
func NewCommand(ctx context.Context) *cobra.Command {
	o := NewOptions()
	cmd := &cobra.Command{
		Use:   "periscope-apiserver",
		Short: "Serves computed, read-only visibility objects (RukPakConfig) as an aggregated API",
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(c.Context())
		},
	}
	cmd.SetContext(ctx)
	flags := cmd.Flags()
	o.Recommended.AddFlags(flags)
	flags.StringVar(&o.RukPakNamespace, "rukpak-namespace", o.RukPakNamespace, "Namespace where upstream rukpak runs its provisioner Deployments.")
	flags.DurationVar(&o.DiscoveryInterval, "discovery-interval", o.DiscoveryInterval, "How often API discovery is read to notice source CRDs that are installed or removed.")
	flags.DurationVar(&o.BookmarkInterval, "bookmark-interval", o.BookmarkInterval, "How often watches that allow bookmarks receive one (at most 1m).")
	flags.IntVar(&o.EventLogSize, "event-log-size", o.EventLogSize, "Changes kept per resource for watches and paginated lists that resume from an older resource version.")
	flags.IntVar(&o.WatcherBuffer, "watcher-buffer", o.WatcherBuffer, "Events a watcher may fall behind before it is closed (its client then resumes).")
	flags.BoolVar(&o.EmitEvents, "emit-events", o.EmitEvents, "Record an Event on a cluster object when its readiness changes (one replica records, elected with a Lease).")
	flags.StringVar(&o.LeaseNamespace, "leader-election-namespace", o.LeaseNamespace, "Namespace of the Lease that elects the replica recording Events.")
	flags.IntVar(&o.Workers, "workers", o.Workers, "Workers computing ClusterReadiness objects.")
	flags.StringVar(&o.ExtensionNamespace, "extension-namespace", o.ExtensionNamespace, "Namespace of readiness extension registrations (ConfigMaps labelled visibility.periscope.dev/readiness-extension=true); normally Periscope's own.")
	flags.IntVar(&o.ExtensionWorkers, "extension-workers", o.ExtensionWorkers, "Concurrent check calls per readiness extension.")
	flags.DurationVar(&o.ExtensionResync, "extension-resync", o.ExtensionResync, "How often a check is asked again when the extension gave no retryAfterSeconds.")
	flags.DurationVar(&o.ExtensionDiscoveryInterval, "extension-discovery-interval", o.ExtensionDiscoveryInterval, "How often each readiness extension's discovery is called again.")
	return cmd
}

// Validate checks the options.
func (o *Options) Validate() error {
	errs := o.Recommended.Validate()
	if o.RukPakNamespace == "" {
		errs = append(errs, fmt.Errorf("--rukpak-namespace must not be empty"))
	}
	if o.DiscoveryInterval < time.Second {
		errs = append(errs, fmt.Errorf("--discovery-interval must be at least 1s"))
	}
	if o.BookmarkInterval <= 0 || o.BookmarkInterval > time.Minute {
		errs = append(errs, fmt.Errorf("--bookmark-interval must be in (0, 1m]"))
	}
	if o.EventLogSize < 100 {
		errs = append(errs, fmt.Errorf("--event-log-size must be at least 100"))
	}
	if o.Workers < 1 {
		errs = append(errs, fmt.Errorf("--workers must be at least 1"))
	}
	if o.EmitEvents && o.LeaseNamespace == "" {
		errs = append(errs, fmt.Errorf("--leader-election-namespace must not be empty with --emit-events"))
	}
	if o.ExtensionNamespace == "" {
		errs = append(errs, fmt.Errorf("--extension-namespace must not be empty"))
	}
	if o.ExtensionWorkers < 1 || o.ExtensionWorkers > 100 {
		errs = append(errs, fmt.Errorf("--extension-workers must be between 1 and 100"))
	}
	if o.ExtensionResync < time.Second {
		errs = append(errs, fmt.Errorf("--extension-resync must be at least 1s"))
	}
	if o.ExtensionDiscoveryInterval < time.Second {
		errs = append(errs, fmt.Errorf("--extension-discovery-interval must be at least 1s"))
	}
	if o.WatcherBuffer < 10 {
		errs = append(errs, fmt.Errorf("--watcher-buffer must be at least 10"))
	}
	return utilerrors.NewAggregate(errs)
}

// Config builds the server configuration.
func (o *Options) Config() (*apiserver.Config, error) {
	if err := o.Recommended.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
		return nil, fmt.Errorf("creating self-signed certificates: %w", err)
	}
	generic := genericapiserver.NewRecommendedConfig(apiserver.Codecs)
	generic.EffectiveVersion = compatibility.DefaultBuildEffectiveVersion()
	generic.FeatureGate = utilfeature.DefaultFeatureGate
	namer := openapi.NewDefinitionNamer(apiserver.Scheme)
	generic.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(generatedopenapi.GetOpenAPIDefinitions, namer)
	generic.OpenAPIConfig.Info.Title = "Periscope"
	generic.OpenAPIConfig.Info.Version = v1alpha1.SchemeGroupVersion.Version
	generic.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(generatedopenapi.GetOpenAPIDefinitions, namer)
	generic.OpenAPIV3Config.Info.Title = "Periscope"
	generic.OpenAPIV3Config.Info.Version = v1alpha1.SchemeGroupVersion.Version
	if err := o.Recommended.ApplyTo(generic); err != nil {
		return nil, fmt.Errorf("applying options: %w", err)
	}
	if generic.ClientConfig == nil {
		return nil, fmt.Errorf("no client configuration: pass --kubeconfig or run in a cluster")
	}
	kube, err := kubernetes.NewForConfig(generic.ClientConfig)
	if err != nil {
		return nil, fmt.Errorf("building the Kubernetes client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(generic.ClientConfig)
	if err != nil {
		return nil, fmt.Errorf("building the dynamic client: %w", err)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(generic.ClientConfig)
	if err != nil {
		return nil, fmt.Errorf("building the discovery client: %w", err)
	}
	return &apiserver.Config{
		GenericConfig: generic,
		ExtraConfig: apiserver.ExtraConfig{
			RukPakNamespace:   o.RukPakNamespace,
			DiscoveryInterval: o.DiscoveryInterval,
			Store: store.Config{
				EventLogSize:      o.EventLogSize,
				WatcherBufferSize: o.WatcherBuffer,
				BookmarkInterval:  o.BookmarkInterval,
			},
			EmitEvents:     o.EmitEvents,
			LeaseNamespace: o.LeaseNamespace,
			Workers:        o.Workers,
			Extensions: apiserver.ExtensionConfig{
				Namespace:         o.ExtensionNamespace,
				Workers:           o.ExtensionWorkers,
				Resync:            o.ExtensionResync,
				DiscoveryInterval: o.ExtensionDiscoveryInterval,
			},
			Kubernetes: kube,
			Dynamic:    dyn,
			Discovery:  disco,
		},
	}, nil
}

// Run serves until ctx is done.
func (o *Options) Run(ctx context.Context) error {
	cfg, err := o.Config()
	if err != nil {
		return err
	}
	server, err := cfg.Complete().New()
	if err != nil {
		return err
	}
	return server.GenericAPIServer.PrepareRun().RunWithContext(ctx)
}
