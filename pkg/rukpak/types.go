// Package rukpak computes the RukPakConfig status from the state of rukpak's workloads,
// Bundles and BundleDeployments. It is pure: the inputs are plain values extracted from source
// objects (see extract.go), and nothing here talks to an API server.
package rukpak

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
)

// Opt-in metadata for third-party provisioners.
const (
	// ProvisionerLabel marks a workload (any namespace) as a rukpak provisioner.
	ProvisionerLabel = "visibility.periscope.dev/provisioner"
	// ProvisionerClassesAnnotation lists, comma-separated, the classes an opted-in workload serves.
	ProvisionerClassesAnnotation = "visibility.periscope.dev/provisioner-classes"
)

// Upstream provisioner classes and the bundle format of each.
const (
	ClassPlain    = "core-rukpak-io-plain"
	ClassRegistry = "core-rukpak-io-registry"
	ClassHelm     = "core-rukpak-io-helm"
)

// upstreamProvisioners are the Deployments that upstream rukpak installs in its namespace,
// with the classes each serves (core since v0.12; the single-class ones before it, and helm).
var upstreamProvisioners = map[string][]string{
	"core":                 {ClassPlain, ClassRegistry},
	"helm-provisioner":     {ClassHelm},
	"plain-provisioner":    {ClassPlain},
	"registry-provisioner": {ClassRegistry},
}

var bundleFormats = map[string]string{
	ClassPlain:    "plain+v0",
	ClassRegistry: "registry+v1",
	ClassHelm:     "helm+v3",
}

// Workload is what the computation needs of a Deployment, StatefulSet or DaemonSet.
type Workload struct {
	Kind        v1alpha1.WorkloadKind
	Namespace   string
	Name        string
	Labels      map[string]string
	Annotations map[string]string
	Desired     int32
	Ready       int32
	LastWrite   time.Time
}

// Progress is how far a Bundle or BundleDeployment has come.
type Progress int

// Progress values.
const (
	Pending Progress = iota
	Ready
	Failing
)

// BundleRef is what the computation needs of a Bundle or BundleDeployment.
type BundleRef struct {
	Name      string
	Class     string
	Progress  Progress
	LastWrite time.Time
}

// InvalidSource is a source object that could not be read, and why.
type InvalidSource struct {
	Kind    string
	Name    string
	Problem string
}

// Input is everything the RukPakConfig status is computed from.
type Input struct {
	// Namespace is where upstream rukpak runs (rukpak-system by default).
	Namespace string
	// Installed is true when the rukpak API (bundles or bundledeployments) is served.
	Installed         bool
	Workloads         []Workload
	Bundles           []BundleRef
	BundleDeployments []BundleRef
	Invalid           []InvalidSource
	// Previous holds the conditions computed before, so that a condition's
	// lastTransitionTime moves only when its status does.
	Previous []metav1.Condition
	// Floor is the earliest transition time to report (the cluster's creation), used when no
	// source carries a later timestamp.
	Floor time.Time
}
