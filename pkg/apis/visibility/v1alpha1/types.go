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

// +genclient
// +genclient:onlyVerbs=get,list,watch
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ClusterReadiness tells whether a managed cluster (a Cluster API Cluster or a Sveltos
// SveltosCluster) is available and whether every add-on that its matching Sveltos
// ClusterProfiles and Profiles deploy is deployed. There is one per managed cluster, with the
// cluster's namespace, name and labels; it is computed from live cluster state and read-only.
type ClusterReadiness struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Status is the state computed from the cluster.
	Status ClusterReadinessStatus `json:"status,omitempty"`
}

// ClusterType is the kind of managed cluster, as Sveltos names it.
type ClusterType string

// Cluster types.
const (
	// ClusterTypeCapi is a Cluster API Cluster (cluster.x-k8s.io).
	ClusterTypeCapi ClusterType = "Capi"
	// ClusterTypeSveltos is a Sveltos SveltosCluster (lib.projectsveltos.io).
	ClusterTypeSveltos ClusterType = "Sveltos"
)

// ClusterReadinessStatus is the computed readiness of one cluster.
type ClusterReadinessStatus struct {
	// ClusterRef names the source cluster object.
	ClusterRef ClusterReference `json:"clusterRef"`
	// ClusterType is Capi or Sveltos.
	ClusterType ClusterType `json:"clusterType"`
	// Ready is true when the Ready condition is True.
	Ready bool `json:"ready"`
	// Addons counts the matching profiles by state.
	Addons AddonCounts `json:"addons"`
	// Profiles has one entry per ClusterProfile or Profile that matches the cluster (DryRun
	// profiles deploy nothing and are left out), sorted by kind and name.
	// +optional
	// +listType=atomic
	Profiles []ProfileReadiness `json:"profiles,omitempty"`
	// Checks are the results of readiness extensions.
	// +optional
	// +listType=atomic
	Checks []CheckResult `json:"checks,omitempty"`
	// Conditions: ClusterAvailable, AddonsDeployed, ChecksPassed and Ready, which is True only
	// when the other three are.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ClusterReference names a cluster object in the ClusterReadiness's namespace.
type ClusterReference struct {
	// APIVersion of the cluster object, as read.
	APIVersion string `json:"apiVersion"`
	// Kind is Cluster or SveltosCluster.
	Kind string `json:"kind"`
	// Name of the cluster object.
	Name string `json:"name"`
}

// AddonCounts counts add-on profiles by state.
type AddonCounts struct {
	Total        int32 `json:"total"`
	Deployed     int32 `json:"deployed"`
	Provisioning int32 `json:"provisioning"`
	Failed       int32 `json:"failed"`
	Pending      int32 `json:"pending"`
}

// ProfileState is how far a profile's add-ons have been deployed to a cluster.
type ProfileState string

// Profile states.
const (
	// ProfileDeployed: the ClusterSummary reports every feature the profile asks for as
	// Provisioned, with no helm conflict and no failure.
	ProfileDeployed ProfileState = "Deployed"
	// ProfileProvisioning: the ClusterSummary exists but not every feature is Provisioned yet.
	ProfileProvisioning ProfileState = "Provisioning"
	// ProfileFailed: a feature failed, the summary reports a failure or a helm conflict, or the
	// summary could not be read.
	ProfileFailed ProfileState = "Failed"
	// ProfilePending: there is no ClusterSummary for the profile and cluster yet.
	ProfilePending ProfileState = "Pending"
)

// ProfileReadiness is the state of one matching ClusterProfile or Profile on the cluster.
type ProfileReadiness struct {
	// Kind is ClusterProfile or Profile.
	Kind string `json:"kind"`
	// Name of the profile (a Profile is in the cluster's namespace).
	Name string `json:"name"`
	// ClusterSummary is the name of the ClusterSummary that reports on it, if there is one.
	// +optional
	ClusterSummary string `json:"clusterSummary,omitempty"`
	// State is Deployed, Provisioning, Failed or Pending.
	State ProfileState `json:"state"`
	// Features are the feature summaries the ClusterSummary reports, sorted by featureID.
	// +optional
	// +listType=atomic
	Features []FeatureStatus `json:"features,omitempty"`
	// Message explains a state other than Deployed.
	// +optional
	Message string `json:"message,omitempty"`
}

// FeatureStatus is one feature summary of a ClusterSummary.
type FeatureStatus struct {
	// FeatureID is Resources, Helm or Kustomize.
	FeatureID string `json:"featureID"`
	// Status as Sveltos reports it: Provisioning, Provisioned, Failed, FailedNonRetriable,
	// Removing, Removed or AgentRemoving.
	// +optional
	Status string `json:"status,omitempty"`
	// FailureMessage as Sveltos reports it.
	// +optional
	FailureMessage string `json:"failureMessage,omitempty"`
}

// CheckResult is the latest answer of one readiness extension handler for the cluster.
type CheckResult struct {
	// Extension is the name of the registration.
	Extension string `json:"extension"`
	// Handler is the handler's name.
	Handler string `json:"handler"`
	// Ready is the handler's verdict.
	Ready bool `json:"ready"`
	// Reason is a CamelCase reason for the verdict.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message is the handler's message.
	// +optional
	Message string `json:"message,omitempty"`
	// LastProbeTime is when this replica first received the answer shown: it moves when the
	// answer changes, not on every call, so that re-asking does not churn the object.
	// +optional
	LastProbeTime metav1.Time `json:"lastProbeTime,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ClusterReadinessList is a list of ClusterReadiness objects.
type ClusterReadinessList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []ClusterReadiness `json:"items"`
}

// +genclient
// +genclient:nonNamespaced
// +genclient:onlyVerbs=get,list,watch
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ReadinessExtension is a readiness extension registration as Periscope sees it: the
// registration (a labelled ConfigMap in Periscope's namespace), the handlers discovered and
// each handler's health. One per registration, with the ConfigMap's name; computed, read-only.
type ReadinessExtension struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ReadinessExtensionSpec   `json:"spec,omitempty"`
	Status ReadinessExtensionStatus `json:"status,omitempty"`
}

// ReadinessExtensionSpec is the registration as read from its ConfigMap.
type ReadinessExtensionSpec struct {
	// ConfigMap is the registration: namespace/name.
	ConfigMap string `json:"configMap"`
	// Endpoint is where the extension is called: its URL, or service namespace/name:port/path.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`
	// NamespaceSelector selects the namespaces whose clusters are checked; absent means all.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
	// ClusterSelector selects the clusters checked by their labels; absent means all.
	// +optional
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`
	// Settings are passed to every call unchanged.
	// +optional
	Settings map[string]string `json:"settings,omitempty"`
}

// HandlerHealth is whether a handler answers.
type HandlerHealth string

const (
	// HandlerHealthy: the last call got an answer (Success or an explicit Failure about a cluster).
	HandlerHealthy HandlerHealth = "Healthy"
	// HandlerFailing: the last call got no usable answer (unreachable, timed out, non-200,
	// invalid); lastError says why. Calls back off while it fails.
	HandlerFailing HandlerHealth = "Failing"
	// HandlerUnknown: not called yet.
	HandlerUnknown HandlerHealth = "Unknown"
)

// ReadinessExtensionStatus is what discovery and the calls found.
type ReadinessExtensionStatus struct {
	// Handlers are the ClusterReadinessCheck handlers discovered.
	// +optional
	// +listType=map
	// +listMapKey=name
	Handlers []HandlerStatus `json:"handlers,omitempty"`
	// DiscoveryError is the error of the last discovery; empty when it succeeded.
	// +optional
	DiscoveryError string `json:"discoveryError,omitempty"`
	// Conditions: Valid (the registration parses), Discovered (the last discovery succeeded),
	// HandlersHealthy (no handler is Failing) and Ready, True when the three others are.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// HandlerStatus is one discovered handler.
type HandlerStatus struct {
	// Name is the handler's name: the last path segment of its hook.
	Name string `json:"name"`
	// TimeoutSeconds bounds each call.
	TimeoutSeconds int32 `json:"timeoutSeconds"`
	// FailurePolicy is Fail or Ignore.
	FailurePolicy string `json:"failurePolicy"`
	// Health is Healthy, Failing or Unknown.
	Health HandlerHealth `json:"health"`
	// LastError is why the handler is Failing.
	// +optional
	LastError string `json:"lastError,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ReadinessExtensionList is a list of ReadinessExtension objects.
type ReadinessExtensionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []ReadinessExtension `json:"items"`
}
