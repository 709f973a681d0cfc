// Command approval-extension is an example Periscope readiness extension: its handler
// "approved" passes a cluster only when a ConfigMap in the cluster's namespace approves it,
// that is, when data[<cluster name>] is "approved". See README.md.
//
// It reads ConfigMaps from an informer's cache, so a check never waits for the API server. The
// informer watches every ConfigMap of every namespace (the ConfigMap's name comes from each
// registration's settings, so no field or label selector can narrow it), and its cache holds
// all of them, less managedFields, annotations and binaryData, which a transform drops: budget
// memory of about the total size of the ConfigMaps' data in the cluster.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"periscope.dev/periscope/pkg/extension"
)

// HandlerName is the handler's name, the last path segment of its hook.
const HandlerName = "approved"

type options struct {
	kubeconfig  string
	bindAddress string
	certFile    string
	keyFile     string
}

func main() {
	klog.InitFlags(nil)
	var o options
	flag.StringVar(&o.kubeconfig, "kubeconfig", "", "Path to a kubeconfig; empty means the in-cluster configuration.")
	flag.StringVar(&o.bindAddress, "bind-address", ":9443", "Address to serve HTTPS on.")
	flag.StringVar(&o.certFile, "tls-cert-file", "", "Serving certificate (PEM), for example tls.crt of a cert-manager Secret.")
	flag.StringVar(&o.keyFile, "tls-key-file", "", "Serving certificate's private key (PEM).")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		klog.ErrorS(err, "Approval extension failed")
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
	}
	klog.Flush()
}

func run(ctx context.Context, o options) error {
	if o.certFile == "" || o.keyFile == "" {
		return errors.New("--tls-cert-file and --tls-key-file are required: Periscope calls extensions over HTTPS only")
	}
	config, err := restConfig(o.kubeconfig)
	if err != nil {
		return err
	}
	config.UserAgent = "periscope-approval-extension"
	config.ContentType = "application/vnd.kubernetes.protobuf"
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}

	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(trimConfigMap))
	lister := factory.Core().V1().ConfigMaps().Lister()
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	// Serve only once the cache is complete: before that, a missing ConfigMap may just be one
	// not listed yet. The Deployment's TCP readiness probe therefore passes only after the sync.
	klog.InfoS("Waiting for the ConfigMap cache to sync")
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("the %v cache did not sync", typ)
		}
	}

	srv, err := extension.NewServer(extension.HandlerSpec{
		Name:           HandlerName,
		TimeoutSeconds: 5,
		// A gate that cannot be asked stays closed.
		FailurePolicy: extension.FailurePolicyFail,
		Check: func(_ context.Context, req *extension.ClusterReadinessCheckRequest) (extension.Result, error) {
			res, err := checkApproval(lister, req.Cluster, req.Settings)
			logger := klog.LoggerWithValues(klog.Background(), "cluster", klog.KRef(req.Cluster.Namespace, req.Cluster.Name), "kind", req.Cluster.Kind)
			if err != nil {
				logger.Error(err, "Check failed")
			} else {
				logger.V(2).Info("Checked", "ready", res.Ready, "message", res.Message)
			}
			return res, err
		},
	})
	if err != nil {
		return err
	}
	klog.InfoS("Serving", "address", o.bindAddress, "handler", HandlerName)
	return extension.ListenAndServeTLS(ctx, o.bindAddress, o.certFile, o.keyFile, srv)
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		return rest.InClusterConfig()
	}
	return clientcmd.BuildConfigFromFlags("", kubeconfig)
}

// trimConfigMap drops what the check never reads before the informer caches a ConfigMap.
func trimConfigMap(obj any) (any, error) {
	if cm, ok := obj.(*corev1.ConfigMap); ok {
		cm.ManagedFields = nil
		cm.Annotations = nil
		cm.BinaryData = nil
	}
	return obj, nil
}
