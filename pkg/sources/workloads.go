package sources

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// Workloads caches the workloads that may run rukpak provisioners: the Deployments of the
// rukpak namespace, and the Deployments, StatefulSets and DaemonSets of any namespace that carry
// the opt-in label. It never watches all workloads of the cluster.
type Workloads struct {
	inNamespace informers.SharedInformerFactory
	optedIn     informers.SharedInformerFactory

	namespaceDeployments cache.SharedIndexInformer
	deployments          cache.SharedIndexInformer
	statefulSets         cache.SharedIndexInformer
	daemonSets           cache.SharedIndexInformer
}

// NewWorkloads returns workload informers; onChange is called on every change.
func NewWorkloads(client kubernetes.Interface, namespace, optInLabel string, onChange func()) *Workloads {
	inNamespace := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithNamespace(namespace), informers.WithTransform(trimWorkload))
	optedIn := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithTransform(trimWorkload),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = labels.Set{optInLabel: "true"}.String()
		}))
	w := &Workloads{
		inNamespace:          inNamespace,
		optedIn:              optedIn,
		namespaceDeployments: inNamespace.Apps().V1().Deployments().Informer(),
		deployments:          optedIn.Apps().V1().Deployments().Informer(),
		statefulSets:         optedIn.Apps().V1().StatefulSets().Informer(),
		daemonSets:           optedIn.Apps().V1().DaemonSets().Informer(),
	}
	for _, inf := range []cache.SharedIndexInformer{w.namespaceDeployments, w.deployments, w.statefulSets, w.daemonSets} {
		if _, err := inf.AddEventHandler(ChangeHandler(onChange)); err != nil {
			klog.ErrorS(err, "Adding a workload event handler")
		}
	}
	return w
}

// Start starts the informers.
func (w *Workloads) Start(ctx context.Context) {
	w.inNamespace.Start(ctx.Done())
	w.optedIn.Start(ctx.Done())
}

// HasSynced is true once every informer has synced.
func (w *Workloads) HasSynced() bool {
	return w.namespaceDeployments.HasSynced() && w.deployments.HasSynced() &&
		w.statefulSets.HasSynced() && w.daemonSets.HasSynced()
}

// Deployments returns the cached Deployments (a Deployment of the rukpak namespace that also
// opts in is returned twice; callers deduplicate).
func (w *Workloads) Deployments() []*appsv1.Deployment {
	return append(listOf[*appsv1.Deployment](w.namespaceDeployments), listOf[*appsv1.Deployment](w.deployments)...)
}

// StatefulSets returns the cached opted-in StatefulSets.
func (w *Workloads) StatefulSets() []*appsv1.StatefulSet {
	return listOf[*appsv1.StatefulSet](w.statefulSets)
}

// DaemonSets returns the cached opted-in DaemonSets.
func (w *Workloads) DaemonSets() []*appsv1.DaemonSet { return listOf[*appsv1.DaemonSet](w.daemonSets) }

func listOf[T any](inf cache.SharedIndexInformer) []T {
	items := inf.GetStore().List()
	out := make([]T, 0, len(items))
	for _, item := range items {
		if t, ok := item.(T); ok {
			out = append(out, t)
		}
	}
	return out
}

// trimWorkload drops the pod template, the biggest part of a workload, which is never read.
func trimWorkload(in interface{}) (interface{}, error) {
	switch o := in.(type) {
	case *appsv1.Deployment:
		trimMeta(o)
		o.Spec.Template = corev1.PodTemplateSpec{}
	case *appsv1.StatefulSet:
		trimMeta(o)
		o.Spec.Template = corev1.PodTemplateSpec{}
		o.Spec.VolumeClaimTemplates = nil
	case *appsv1.DaemonSet:
		trimMeta(o)
		o.Spec.Template = corev1.PodTemplateSpec{}
	}
	return in, nil
}
