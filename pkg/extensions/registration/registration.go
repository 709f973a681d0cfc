// Package registration reads readiness extension registrations: ConfigMaps labelled
// visibility.periscope.dev/readiness-extension=true in Periscope's namespace. Parsing is pure and
// strict, so that a typo is reported on the registration instead of silently ignored.
package registration

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/url"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// Label marks a ConfigMap as a readiness extension registration.
const Label = "visibility.periscope.dev/readiness-extension"

// Data keys of a registration ConfigMap; each value is YAML.
const (
	KeyClientConfig      = "clientConfig"
	KeyNamespaceSelector = "namespaceSelector"
	KeyClusterSelector   = "clusterSelector"
	KeySettings          = "settings"
)

// ServiceReference is an extension reached through a Service; the TLS server name is
// <name>.<namespace>.svc, as for webhooks and APIServices.
type ServiceReference struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Port      *int32 `json:"port,omitempty"`
	Path      string `json:"path,omitempty"`
}

// ClientConfig is how to reach an extension: a URL or a Service, and the CA to verify it with.
type ClientConfig struct {
	URL     string            `json:"url,omitempty"`
	Service *ServiceReference `json:"service,omitempty"`
	// CABundle is PEM; in YAML it is base64, as in webhook configurations. Empty means the
	// system's roots.
	CABundle []byte `json:"caBundle,omitempty"`
}

// Registration is a parsed registration.
type Registration struct {
	// Name, UID, ResourceVersion and Created are the ConfigMap's.
	Name            string
	UID             types.UID
	ResourceVersion string
	Created         metav1.Time

	ClientConfig ClientConfig
	// NamespaceSelectorSpec and ClusterSelectorSpec are as written (nil when absent);
	// NamespaceSelector and ClusterSelector are the parsed forms (Everything when absent).
	NamespaceSelectorSpec *metav1.LabelSelector
	ClusterSelectorSpec   *metav1.LabelSelector
	NamespaceSelector     labels.Selector
	ClusterSelector       labels.Selector
	Settings              map[string]string
}

// DefaultPort is a service reference's port when none is given.
const DefaultPort int32 = 443

// FromConfigMap parses and validates a registration. The error lists every problem found.
func FromConfigMap(cm *corev1.ConfigMap) (Registration, error) {
	r := Registration{
		Name: cm.Name, UID: cm.UID, ResourceVersion: cm.ResourceVersion, Created: cm.CreationTimestamp,
		NamespaceSelector: labels.Everything(), ClusterSelector: labels.Everything(),
	}
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	known := map[string]bool{KeyClientConfig: true, KeyNamespaceSelector: true, KeyClusterSelector: true, KeySettings: true}
	var unknown []string
	for k := range cm.Data {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	for k := range cm.BinaryData {
		unknown = append(unknown, k)
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		add("unknown key %q (known: clientConfig, namespaceSelector, clusterSelector, settings)", k)
	}

	raw, ok := cm.Data[KeyClientConfig]
	if !ok || strings.TrimSpace(raw) == "" {
		add("%s is required", KeyClientConfig)
	} else if err := yaml.UnmarshalStrict([]byte(raw), &r.ClientConfig); err != nil {
		add("%s: %v", KeyClientConfig, err)
	} else {
		problems = append(problems, validateClientConfig(&r.ClientConfig)...)
	}

	for _, sel := range []struct {
		key    string
		spec   **metav1.LabelSelector
		parsed *labels.Selector
	}{
		{KeyNamespaceSelector, &r.NamespaceSelectorSpec, &r.NamespaceSelector},
		{KeyClusterSelector, &r.ClusterSelectorSpec, &r.ClusterSelector},
	} {
		raw, ok := cm.Data[sel.key]
		if !ok || strings.TrimSpace(raw) == "" {
			continue
		}
		var spec metav1.LabelSelector
		if err := yaml.UnmarshalStrict([]byte(raw), &spec); err != nil {
			add("%s: %v", sel.key, err)
			continue
		}
		parsed, err := metav1.LabelSelectorAsSelector(&spec)
		if err != nil {
			add("%s: %v", sel.key, err)
			continue
		}
		*sel.spec, *sel.parsed = &spec, parsed
	}

	if raw, ok := cm.Data[KeySettings]; ok && strings.TrimSpace(raw) != "" {
		if err := yaml.UnmarshalStrict([]byte(raw), &r.Settings); err != nil {
			add("%s must be a map of strings: %v", KeySettings, err)
		}
	}
	if len(problems) > 0 {
		return r, fmt.Errorf("invalid readiness extension registration: %s", strings.Join(problems, "; "))
	}
	return r, nil
}

func validateClientConfig(cc *ClientConfig) []string {
	var problems []string
	switch {
	case cc.URL != "" && cc.Service != nil:
		problems = append(problems, "clientConfig: give url or service, not both")
	case cc.URL == "" && cc.Service == nil:
		problems = append(problems, "clientConfig: url or service is required")
	case cc.URL != "":
		u, err := url.Parse(cc.URL)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("clientConfig.url: %v", err))
		case u.Scheme != "https":
			problems = append(problems, fmt.Sprintf("clientConfig.url: scheme must be https, not %q", u.Scheme))
		case u.Host == "":
			problems = append(problems, "clientConfig.url: a host is required")
		case u.User != nil:
			problems = append(problems, "clientConfig.url: user information is not allowed")
		case u.RawQuery != "" || u.Fragment != "":
			problems = append(problems, "clientConfig.url: a query or fragment is not allowed")
		}
	default:
		s := cc.Service
		for _, msg := range validation.IsDNS1123Label(s.Namespace) {
			problems = append(problems, fmt.Sprintf("clientConfig.service.namespace %q: %s", s.Namespace, msg))
		}
		for _, msg := range validation.IsDNS1035Label(s.Name) {
			problems = append(problems, fmt.Sprintf("clientConfig.service.name %q: %s", s.Name, msg))
		}
		if s.Port != nil {
			for _, msg := range validation.IsValidPortNum(int(*s.Port)) {
				problems = append(problems, fmt.Sprintf("clientConfig.service.port: %s", msg))
			}
		}
		if s.Path != "" && !strings.HasPrefix(s.Path, "/") {
			problems = append(problems, "clientConfig.service.path must start with /")
		}
	}
	if len(cc.CABundle) > 0 {
		if err := checkPEM(cc.CABundle); err != nil {
			problems = append(problems, fmt.Sprintf("clientConfig.caBundle: %v", err))
		}
	}
	return problems
}

func checkPEM(bundle []byte) error {
	rest, n := bundle, 0
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return fmt.Errorf("parsing a certificate: %w", err)
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("no PEM certificate found")
	}
	return nil
}

// BaseURL is the URL the hook paths are appended to, and the TLS server name to verify.
func (cc ClientConfig) BaseURL(resolveService func(namespace, name string, port int32) (host string, err error)) (base, serverName string, err error) {
	if cc.URL != "" {
		return strings.TrimSuffix(cc.URL, "/"), "", nil
	}
	s := cc.Service
	if s == nil {
		return "", "", fmt.Errorf("clientConfig has neither url nor service")
	}
	port := DefaultPort
	if s.Port != nil {
		port = *s.Port
	}
	host, err := resolveService(s.Namespace, s.Name, port)
	if err != nil {
		return "", "", fmt.Errorf("resolving service %s/%s: %w", s.Namespace, s.Name, err)
	}
	return "https://" + host + strings.TrimSuffix(s.Path, "/"), s.Name + "." + s.Namespace + ".svc", nil
}

// Endpoint describes where the extension is, for display.
func (cc ClientConfig) Endpoint() string {
	if cc.URL != "" {
		return cc.URL
	}
	if cc.Service == nil {
		return ""
	}
	port := DefaultPort
	if cc.Service.Port != nil {
		port = *cc.Service.Port
	}
	return fmt.Sprintf("service %s/%s:%d%s", cc.Service.Namespace, cc.Service.Name, port, cc.Service.Path)
}
