package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RukPakConfigName is the name of the one RukPakConfig object a cluster has.
const RukPakConfigName = "cluster"

// +genclient
// +genclient:nonNamespaced
// +genclient:onlyVerbs=get,list,watch
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// RukPakConfig tells which rukpak provisioners are installed and running, which provisioner
// classes (bundle types) they serve, and which classes bundles ask for that nothing serves.
// There is exactly one, named "cluster"; it is computed from live cluster state and read-only.
type RukPakConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Status is the state computed from the cluster.
	Status RukPakConfigStatus `json:"status,omitempty"`
}

// RukPakConfigStatus is the computed state of rukpak in the cluster.
type RukPakConfigStatus struct {
	// Installed is true when a rukpak API (bundles or bundledeployments in core.rukpak.io) is served.
	Installed bool `json:"installed"`

	// Provisioners are the workloads that run rukpak provisioners: the upstream rukpak
	// Deployments in the rukpak namespace and every workload that opts in with the label
	// visibility.periscope.dev/provisioner=true. Sorted by namespace and name.
	// +optional
	// +listType=atomic
	Provisioners []Provisioner `json:"provisioners,omitempty"`

	// Classes are the provisioner classes that a provisioner serves or that a Bundle or
	// BundleDeployment names. Sorted by name.
	// +optional
	// +listType=atomic
	Classes []ProvisionerClass `json:"classes,omitempty"`

	// Conditions: Available is True when rukpak is installed, every provisioner is Running and
	// no class is Missing. SourcesValid is False when a source object could not be read.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// WorkloadKind is the kind of workload that runs a provisioner.
type WorkloadKind string

// The workload kinds a provisioner can run as.
const (
	WorkloadDeployment  WorkloadKind = "Deployment"
	WorkloadStatefulSet WorkloadKind = "StatefulSet"
	WorkloadDaemonSet   WorkloadKind = "DaemonSet"
)

// ProvisionerState says whether a provisioner workload runs.
type ProvisionerState string

// Provisioner states.
const (
	// ProvisionerRunning: every desired replica is ready.
	ProvisionerRunning ProvisionerState = "Running"
	// ProvisionerDegraded: some, but not all, desired replicas are ready.
	ProvisionerDegraded ProvisionerState = "Degraded"
	// ProvisionerUnavailable: replicas are desired but none is ready.
	ProvisionerUnavailable ProvisionerState = "Unavailable"
	// ProvisionerDisabled: the workload is scaled to zero.
	ProvisionerDisabled ProvisionerState = "Disabled"
)

// Provisioner is one workload that runs a rukpak provisioner.
type Provisioner struct {
	// Namespace of the workload.
	Namespace string `json:"namespace"`
	// Name of the workload.
	Name string `json:"name"`
	// Kind of the workload: Deployment, StatefulSet or DaemonSet.
	Kind WorkloadKind `json:"kind"`
	// ClassNames are the provisioner classes this workload serves, sorted.
	// +optional
	// +listType=atomic
	ClassNames []string `json:"classNames,omitempty"`
	// State is Running, Degraded, Unavailable or Disabled.
	State ProvisionerState `json:"state"`
	// DesiredReplicas is the number of replicas the workload asks for.
	DesiredReplicas int32 `json:"desiredReplicas"`
	// ReadyReplicas is the number of ready replicas.
	ReadyReplicas int32 `json:"readyReplicas"`
	// Message explains a state other than Running, or a problem with the opt-in annotation.
	// +optional
	Message string `json:"message,omitempty"`
}

// ClassState says whether bundles of a provisioner class can be installed.
type ClassState string

// Class states.
const (
	// ClassAvailable: a Running or Degraded provisioner serves the class.
	ClassAvailable ClassState = "Available"
	// ClassUnavailable: the provisioner that serves the class has no ready replica.
	ClassUnavailable ClassState = "Unavailable"
	// ClassDisabled: the provisioner that serves the class is scaled to zero.
	ClassDisabled ClassState = "Disabled"
	// ClassMissing: bundles name the class but no workload serves it.
	ClassMissing ClassState = "Missing"
)

// ProvisionerClass is one provisioner class (bundle type).
type ProvisionerClass struct {
	// Name of the class, as Bundles and BundleDeployments name it in spec.provisionerClassName.
	Name string `json:"name"`
	// BundleFormat is the bundle format of upstream classes (plain+v0, registry+v1, helm+v3);
	// empty for third-party classes.
	// +optional
	BundleFormat string `json:"bundleFormat,omitempty"`
	// Provisioner is the namespace/name of the workload that serves the class; empty when none
	// does. When several serve it, the one in the best state is named (then by name).
	// +optional
	Provisioner string `json:"provisioner,omitempty"`
	// State is Available, Unavailable, Disabled or Missing.
	State ClassState `json:"state"`
	// Bundles counts the Bundles of this class.
	Bundles BundleCounts `json:"bundles"`
	// BundleDeployments counts the BundleDeployments of this class.
	BundleDeployments BundleCounts `json:"bundleDeployments"`
}

// BundleCounts counts bundles by their progress.
type BundleCounts struct {
	// Total is the number of objects.
	Total int32 `json:"total"`
	// Ready: Bundles in phase Unpacked; BundleDeployments whose Installed condition is True.
	Ready int32 `json:"ready"`
	// Failing: Bundles in phase Failing; BundleDeployments whose Installed condition is False.
	Failing int32 `json:"failing"`
	// Pending: all others (not yet unpacked or installed, typically waiting for a provisioner).
	Pending int32 `json:"pending"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// RukPakConfigList is a list of RukPakConfig objects (at most one).
type RukPakConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []RukPakConfig `json:"items"`
}
