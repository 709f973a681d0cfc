// Package extension is the readiness extension protocol of Periscope, for extension authors and
// for Periscope itself: the request and response types of discovery and of the
// ClusterReadinessCheck hook, and a server helper (Server) that serves discovery and routes
// each check to its handler, so that an extension is a few lines of Go.
//
// The protocol follows Cluster API's Runtime SDK: Periscope POSTs JSON to
//
//	<base>/hooks.visibility.periscope.dev/v1alpha1/discovery
//	<base>/hooks.visibility.periscope.dev/v1alpha1/clusterreadinesscheck/<handler>
//
// over HTTPS and reads a JSON answer. The package imports only the standard library, so that an
// extension's module stays small.
package extension

// APIVersion is the version of the hook protocol.
const APIVersion = "hooks.visibility.periscope.dev/v1alpha1"

// HookClusterReadinessCheck is the one hook Periscope calls.
const HookClusterReadinessCheck = "ClusterReadinessCheck"

// Kinds of the protocol's messages.
const (
	KindDiscoveryRequest                    = "DiscoveryRequest"
	KindDiscoveryResponse                   = "DiscoveryResponse"
	KindClusterReadinessCheckRequest        = "ClusterReadinessCheckRequest"
	KindClusterReadinessCheckResponse       = "ClusterReadinessCheckResponse"
	DiscoveryPath                           = "/" + APIVersion + "/discovery"
	ClusterReadinessCheckPathPrefix         = "/" + APIVersion + "/clusterreadinesscheck/"
	DefaultTimeoutSeconds             int32 = 10
	MaxTimeoutSeconds                 int32 = 30
)

// ResponseStatus says whether the extension could process the request. Failure is the
// extension's own error; a check that merely is not ready answers Success with ready=false.
type ResponseStatus string

const (
	ResponseStatusSuccess ResponseStatus = "Success"
	ResponseStatusFailure ResponseStatus = "Failure"
)

// FailurePolicy says what Periscope does when it cannot get an answer from a handler
// (unreachable, timed out, non-200, unreadable): Fail makes the check not ready, Ignore lets it
// pass. An explicit Failure answer never passes, whatever the policy.
type FailurePolicy string

const (
	FailurePolicyFail   FailurePolicy = "Fail"
	FailurePolicyIgnore FailurePolicy = "Ignore"
)

// TypeMeta names a message, as in Kubernetes.
type TypeMeta struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
}

// DiscoveryRequest asks an extension which handlers it serves.
type DiscoveryRequest struct {
	TypeMeta `json:",inline"`
}

// DiscoveryResponse lists an extension's handlers.
type DiscoveryResponse struct {
	TypeMeta `json:",inline"`
	Status   ResponseStatus `json:"status"`
	Message  string         `json:"message,omitempty"`
	Handlers []Handler      `json:"handlers"`
}

// Handler is one check an extension serves.
type Handler struct {
	// Name is unique within the extension, a DNS label; it is the last path segment of the hook.
	Name        string      `json:"name"`
	RequestHook RequestHook `json:"requestHook"`
	// TimeoutSeconds bounds each call: default 10, at most 30.
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`
	// FailurePolicy defaults to Fail.
	FailurePolicy *FailurePolicy `json:"failurePolicy,omitempty"`
}

// RequestHook names the hook a handler implements.
type RequestHook struct {
	APIVersion string `json:"apiVersion"`
	Hook       string `json:"hook"`
}

// ClusterReadinessCheckRequest asks whether a cluster passes a check.
type ClusterReadinessCheckRequest struct {
	TypeMeta `json:",inline"`
	// Cluster is the managed cluster.
	Cluster ClusterInfo `json:"cluster"`
	// Readiness is what Periscope computed so far, without the extensions' checks.
	Readiness Readiness `json:"readiness"`
	// Settings are the registration's settings, passed through unchanged.
	Settings map[string]string `json:"settings,omitempty"`
}

// ClusterInfo identifies the managed cluster: a Cluster API Cluster or a SveltosCluster.
type ClusterInfo struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Namespace  string            `json:"namespace"`
	Name       string            `json:"name"`
	UID        string            `json:"uid,omitempty"`
	Labels     map[string]string `json:"labels,omitempty"`
}

// Readiness is the readiness Periscope computed before asking the extensions.
type Readiness struct {
	// ClusterAvailable and AddonsDeployed are the statuses of the conditions of the same name.
	ClusterAvailable bool `json:"clusterAvailable"`
	AddonsDeployed   bool `json:"addonsDeployed"`
	// Conditions are ClusterAvailable and AddonsDeployed with their reasons and messages.
	Conditions []Condition `json:"conditions,omitempty"`
}

// Condition is the part of a Kubernetes condition an extension may need.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// ClusterReadinessCheckResponse is an extension's answer about one cluster.
type ClusterReadinessCheckResponse struct {
	TypeMeta `json:",inline"`
	Status   ResponseStatus `json:"status"`
	// Ready says whether the cluster passes the check (meaningful with status Success).
	Ready   bool   `json:"ready"`
	Message string `json:"message,omitempty"`
	// RetryAfterSeconds asks Periscope to call again after this many seconds, for a check whose
	// answer can change without any Kubernetes object changing; 0 leaves it to Periscope's resync.
	RetryAfterSeconds int32 `json:"retryAfterSeconds,omitempty"`
}
