// Package v1alpha1 is the only version of the visibility.periscope.dev API group. Its objects are
// computed from live cluster state; there is no internal version and no storage version.
//
// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +groupName=visibility.periscope.dev
// +k8s:openapi-model-package=dev.periscope.visibility.v1alpha1
package v1alpha1
