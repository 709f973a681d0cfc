package scaffold

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

func TestValidateName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"my-check", true},
		{"a", true},
		{"check2", true},
		{strings.Repeat("a", 63), true},
		{strings.Repeat("a", 64), false},
		{"", false},
		{"My-Check", false},
		{"my_check", false},
		{"my.check", false},
		{"-check", false},
		{"check-", false},
		{"2check", false}, // a Service name starts with a letter
		{"my check", false},
		{"../check", false},
	}
	for _, tt := range tests {
		if err := ValidateName(tt.name); (err == nil) != tt.ok {
			t.Errorf("ValidateName(%q) = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}

func TestValidateModule(t *testing.T) {
	for module, ok := range map[string]bool{
		"example.com/my-check":           true,
		"github.com/acme/checks/v2":      true,
		"my-check":                       true,
		"":                               false,
		"/abs":                           false,
		"a//b":                           false,
		"has space/x":                    false,
		"periscope.dev/periscope":        false,
		"periscope.dev/periscope/ext/my": false,
	} {
		if err := validateModule(module); (err == nil) != ok {
			t.Errorf("validateModule(%q) = %v, want ok=%v", module, err, ok)
		}
	}
}

func checkout(t *testing.T) string {
	t.Helper()
	root, err := FindPeriscopeCheckout(".")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func TestFindPeriscopeCheckout(t *testing.T) {
	root := checkout(t)
	if _, err := os.Stat(filepath.Join(root, "pkg", "scaffold", "scaffold.go")); err != nil {
		t.Errorf("found %s, which is not this checkout: %v", root, err)
	}
	if p, err := FindPeriscopeCheckout(t.TempDir()); err == nil {
		t.Errorf("found a checkout in an empty directory: %s", p)
	}
	// From a test binary (built with full source paths), the default is found either way.
	if p, err := DefaultPeriscopePath(); err != nil || p != root {
		t.Errorf("DefaultPeriscopePath() = %q, %v; want %q", p, err, root)
	}
	o := Options{Name: "x", PeriscopePath: t.TempDir()}
	if err := o.Complete(); err == nil {
		t.Errorf("Complete accepted a --periscope-path that is no Periscope checkout")
	}
}

func TestGenerateRefusesANonEmptyDirectory(t *testing.T) {
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "keep.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Generate(&Options{Name: "my-check", Output: out, PeriscopePath: checkout(t)})
	if err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("Generate into a non-empty directory: err = %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "keep.txt")); string(b) != "mine" {
		t.Errorf("the existing file changed")
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 {
		t.Errorf("Generate wrote into the directory: %v", entries)
	}
}

func TestGenerateDefaults(t *testing.T) {
	root := checkout(t)
	t.Chdir(t.TempDir())
	o := Options{Name: "my-check", PeriscopePath: root}
	if _, err := Generate(&o); err != nil {
		t.Fatal(err)
	}
	if o.Module != "example.com/my-check" || o.Output != "my-check" || !filepath.IsAbs(o.PeriscopePath) {
		t.Errorf("completed options = %+v", o)
	}
	if _, err := os.Stat(filepath.Join("my-check", "go.mod")); err != nil {
		t.Error(err)
	}
}

// TestGeneratedProjectBuilds generates a project and builds it with the go command, offline:
// the module cache must hold what Periscope's pkg/extension needs (only the standard library).
func TestGeneratedProjectBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	root := checkout(t)
	out := filepath.Join(t.TempDir(), "my-check")
	files, err := Generate(&Options{Name: "my-check", Module: "example.com/acme/my-check", Output: out, PeriscopePath: root})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		".dockerignore", ".gitignore", "Dockerfile", "Makefile", "README.md",
		"deploy/certificate.yaml", "deploy/deployment.yaml", "deploy/registration.yaml", "deploy/service.yaml", "deploy/serviceaccount.yaml",
		"go.mod", "go.sum", "main.go", "main_test.go",
	}
	if diff := cmp.Diff(want, files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}

	goMod, err := os.ReadFile(filepath.Join(out, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"module example.com/acme/my-check", "require periscope.dev/periscope v0.0.0", "replace periscope.dev/periscope => " + root} {
		if !strings.Contains(string(goMod), line+"\n") {
			t.Errorf("go.mod lacks %q:\n%s", line, goMod)
		}
	}

	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(goBin, args...)
		cmd.Dir, cmd.Env = out, env
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
		}
	}
	run("mod", "tidy")
	run("build", "./...")
	run("vet", "./...") // type-checks main_test.go too
	bin := filepath.Join(t.TempDir(), "my-check")
	run("build", "-o", bin, ".")
	if st, err := os.Stat(bin); err != nil || st.Size() == 0 || st.Mode()&0o111 == 0 {
		t.Fatalf("no executable binary at %s: %v", bin, err)
	}
	// The binary refuses to serve without a certificate, with a message that says so.
	b, err := exec.Command(bin).CombinedOutput()
	if err == nil || !strings.Contains(string(b), "--tls-cert-file and --tls-key-file are required") {
		t.Errorf("running without a certificate: err = %v, output:\n%s", err, b)
	}
}

// TestGeneratedManifests decodes the generated YAML strictly and checks the pieces fit.
func TestGeneratedManifests(t *testing.T) {
	o := Options{Name: "gate", PeriscopePath: checkout(t)}
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	files, err := Render(o)
	if err != nil {
		t.Fatal(err)
	}
	decode := func(name string, into any) {
		t.Helper()
		if err := yaml.UnmarshalStrict(files[name], into); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	var (
		sa   corev1.ServiceAccount
		dep  appsv1.Deployment
		svc  corev1.Service
		reg  corev1.ConfigMap
		cert struct {
			metav1.TypeMeta   `json:",inline"`
			metav1.ObjectMeta `json:"metadata"`
			Spec              struct {
				SecretName string   `json:"secretName"`
				DNSNames   []string `json:"dnsNames"`
				IssuerRef  struct {
					Kind string `json:"kind"`
					Name string `json:"name"`
				} `json:"issuerRef"`
			} `json:"spec"`
		}
	)
	decode("deploy/serviceaccount.yaml", &sa)
	decode("deploy/deployment.yaml", &dep)
	decode("deploy/service.yaml", &svc)
	decode("deploy/registration.yaml", &reg)
	decode("deploy/certificate.yaml", &cert)

	pod := dep.Spec.Template.Spec
	if pod.ServiceAccountName != sa.Name || sa.Name != "gate" {
		t.Errorf("Deployment runs as %q, ServiceAccount is %q", pod.ServiceAccountName, sa.Name)
	}
	if pod.Volumes[0].Secret.SecretName != cert.Spec.SecretName {
		t.Errorf("Deployment mounts %q, the Certificate writes %q", pod.Volumes[0].Secret.SecretName, cert.Spec.SecretName)
	}
	if want := "gate.periscope-system.svc"; cert.Spec.DNSNames[0] != want || cert.Spec.IssuerRef.Name != Issuer {
		t.Errorf("Certificate = %+v, want %s from %s", cert.Spec, want, Issuer)
	}
	if svc.Spec.Ports[0].Port != 443 || svc.Spec.Ports[0].TargetPort.StrVal != pod.Containers[0].Ports[0].Name {
		t.Errorf("Service ports %+v do not reach the container's %+v", svc.Spec.Ports, pod.Containers[0].Ports)
	}
	if pod.Containers[0].ReadinessProbe.TCPSocket == nil {
		t.Errorf("the readiness probe must be TCP: the extension serves POST only")
	}
	if reg.Namespace != Namespace || reg.Labels[RegistrationLabel] != "true" {
		t.Errorf("registration %s/%s labels %v", reg.Namespace, reg.Name, reg.Labels)
	}
	var clientConfig struct {
		Service struct {
			Namespace, Name string
			Port            int32
		} `json:"service"`
		CABundle string `json:"caBundle"`
	}
	decodeData := func(key string, into any) {
		t.Helper()
		if err := yaml.UnmarshalStrict([]byte(reg.Data[key]), into); err != nil {
			t.Errorf("registration %s: %v", key, err)
		}
	}
	decodeData("clientConfig", &clientConfig)
	if clientConfig.Service.Name != svc.Name || clientConfig.Service.Namespace != svc.Namespace || clientConfig.Service.Port != 443 {
		t.Errorf("clientConfig %+v does not point at the Service", clientConfig)
	}
	var settings map[string]string
	decodeData("settings", &settings)
	if settings["blockLabel"] != "gate.periscope.dev/blocked" {
		t.Errorf("settings = %v", settings)
	}
}

func TestModPath(t *testing.T) {
	for in, want := range map[string]string{
		"/work/periscope":     "/work/periscope",
		"/home/me/my work/p":  `"/home/me/my work/p"`,
		"/tmp/p(1)/periscope": `"/tmp/p(1)/periscope"`,
	} {
		if got := modPath(in); got != want {
			t.Errorf("modPath(%q) = %s, want %s", in, got, want)
		}
	}
}
