package apiserver

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
	"periscope.dev/periscope/pkg/registry/visibility/clusterreadiness"
)

// fieldLabels accepts exactly the given field labels, naming them when rejecting another.
func fieldLabels(supported []string) runtime.FieldLabelConversionFunc {
	return func(label, value string) (string, string, error) {
		for _, s := range supported {
			if label == s {
				return label, value, nil
			}
		}
		return "", "", fmt.Errorf("field label %q is not supported: use one of %s", label, strings.Join(supported, ", "))
	}
}

var (
	// Scheme knows the one external version of the API group; there is no internal version,
	// as every object is computed in the version it is served in.
	Scheme = runtime.NewScheme()
	// Codecs serializes the objects of Scheme.
	Codecs = serializer.NewCodecFactory(Scheme)
)

func init() {
	utilruntime.Must(v1alpha1.AddToScheme(Scheme))
	// Field selectors other than metadata.name and metadata.namespace need a conversion
	// registered, else the request handler rejects them with 400.
	utilruntime.Must(Scheme.AddFieldLabelConversionFunc(v1alpha1.SchemeGroupVersion.WithKind("ClusterReadiness"),
		fieldLabels(clusterreadiness.FieldLabels)))
	utilruntime.Must(Scheme.SetVersionPriority(v1alpha1.SchemeGroupVersion))
	// The types every API server must know to serve discovery and errors.
	metav1.AddToGroupVersion(Scheme, schema.GroupVersion{Version: "v1"})
	unversioned := schema.GroupVersion{Group: "", Version: "v1"}
	Scheme.AddUnversionedTypes(unversioned,
		&metav1.Status{}, &metav1.APIVersions{}, &metav1.APIGroupList{}, &metav1.APIGroup{}, &metav1.APIResourceList{})
}
