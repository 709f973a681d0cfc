// Package scaffold writes a new Periscope readiness extension project: go.mod, main.go with
// one handler built on pkg/extension, a unit test, a Makefile, a Dockerfile, deploy/*.yaml
// (ServiceAccount, Deployment, Service, cert-manager Certificate, registration ConfigMap) and a
// README. It is the logic of the periscope-extension-init command.
//
// Periscope's module is not published, so the generated go.mod requires
// periscope.dev/periscope v0.0.0 and replaces it with a local checkout (Options.PeriscopePath).
package scaffold

import (
	"bufio"
	"bytes"
	"embed"
	"errors"
	"fmt"
	"go/format"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"k8s.io/apimachinery/pkg/util/validation"
)

// PeriscopeModule is the module path of Periscope.
const PeriscopeModule = "periscope.dev/periscope"

// Fixed parts of the generated manifests: the extension runs beside Periscope, in its namespace,
// where the registration ConfigMap must be and where Periscope's artifacts create the Issuer.
const (
	Namespace         = "periscope-system"
	Issuer            = "periscope-selfsigned"
	RegistrationLabel = "visibility.periscope.dev/readiness-extension"
)

//go:embed all:templates
var templates embed.FS

// Options say what to generate.
type Options struct {
	// Name of the extension: a DNS-1035 label (lowercase letters, digits and '-', starting with a
	// letter, at most 63 characters), as it names the handler, the binary and the Kubernetes
	// objects, a Service among them.
	Name string
	// Module is the new project's module path; empty means example.com/<name>.
	Module string
	// Output is the directory to write; empty means ./<name>. It must not exist or be empty.
	Output string
	// PeriscopePath is the Periscope checkout the generated go.mod replaces the module with;
	// empty means DefaultPeriscopePath. It is written as an absolute path.
	PeriscopePath string
}

// ValidateName says whether name can name an extension.
func ValidateName(name string) error {
	if errs := validation.IsDNS1035Label(name); len(errs) > 0 {
		return fmt.Errorf("name %q is not a DNS label (it names the handler and a Service): %s", name, strings.Join(errs, "; "))
	}
	return nil
}

func validateModule(module string) error {
	if module == "" || strings.HasPrefix(module, "/") || strings.HasSuffix(module, "/") || strings.Contains(module, "//") {
		return fmt.Errorf("module path %q is not valid", module)
	}
	for _, r := range module {
		if r <= ' ' || r >= 0x7f || strings.ContainsRune("\"'`\\:;,*?<>|()[]{}", r) {
			return fmt.Errorf("module path %q has the invalid character %q", module, r)
		}
	}
	if module == PeriscopeModule || strings.HasPrefix(module, PeriscopeModule+"/") {
		return fmt.Errorf("module path %q is Periscope's own", module)
	}
	return nil
}

// Complete fills in the defaults and validates the options.
func (o *Options) Complete() error {
	if err := ValidateName(o.Name); err != nil {
		return err
	}
	if o.Module == "" {
		o.Module = "example.com/" + o.Name
	}
	if err := validateModule(o.Module); err != nil {
		return err
	}
	if o.Output == "" {
		o.Output = o.Name
	}
	if o.PeriscopePath == "" {
		p, err := DefaultPeriscopePath()
		if err != nil {
			return err
		}
		o.PeriscopePath = p
	}
	p, err := filepath.Abs(o.PeriscopePath)
	if err != nil {
		return err
	}
	if _, err := moduleOf(p); err != nil {
		return fmt.Errorf("--periscope-path: %w", err)
	}
	o.PeriscopePath = p
	return nil
}

// DefaultPeriscopePath finds the Periscope checkout to build against, in this order:
//  1. the working directory or the nearest of its parents whose go.mod is Periscope's module;
//  2. the checkout this program was compiled from (the source path recorded in the binary, absent
//     when it was built with -trimpath), if that checkout still exists.
func DefaultPeriscopePath() (string, error) {
	var tried []string
	if wd, err := os.Getwd(); err == nil {
		if p, err := FindPeriscopeCheckout(wd); err == nil {
			return p, nil
		}
		tried = append(tried, "the working directory "+wd+" and its parents")
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		// file is <checkout>/pkg/scaffold/scaffold.go.
		root := filepath.Dir(filepath.Dir(filepath.Dir(file)))
		if _, err := moduleOf(root); err == nil {
			return root, nil
		}
		tried = append(tried, "the checkout this binary was built from, "+root)
	}
	return "", fmt.Errorf("no Periscope checkout found (tried %s): pass --periscope-path", strings.Join(tried, ", "))
}

// FindPeriscopeCheckout returns dir or its nearest parent holding Periscope's go.mod.
func FindPeriscopeCheckout(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := moduleOf(dir); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("neither %s nor a parent holds the go.mod of %s", dir, PeriscopeModule)
		}
		dir = parent
	}
}

// goMod is what the generator reads from Periscope's go.mod.
type goMod struct {
	goVersion string
}

// moduleOf reads dir/go.mod and fails unless it is Periscope's module with pkg/extension.
func moduleOf(dir string) (goMod, error) {
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return goMod{}, err
	}
	defer func() { _ = f.Close() }()
	var module string
	var m goMod
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 2 && fields[0] == "module" {
			module = strings.Trim(fields[1], `"`)
		}
		if len(fields) == 2 && fields[0] == "go" {
			m.goVersion = fields[1]
		}
	}
	if err := sc.Err(); err != nil {
		return goMod{}, err
	}
	if module != PeriscopeModule {
		return goMod{}, fmt.Errorf("%s is module %q, not %s", filepath.Join(dir, "go.mod"), module, PeriscopeModule)
	}
	if st, err := os.Stat(filepath.Join(dir, "pkg", "extension")); err != nil || !st.IsDir() {
		return goMod{}, fmt.Errorf("%s has no pkg/extension", dir)
	}
	if m.goVersion == "" {
		m.goVersion = strings.TrimPrefix(runtime.Version(), "go")
	}
	return m, nil
}

// data is what the templates see.
type data struct {
	Name, Module, PeriscopeModule, PeriscopePath, GoVersion string
	Namespace, Issuer, RegistrationLabel, Image             string
}

// modPath writes a path for go.mod, quoted when it has characters go.mod does not take bare.
func modPath(p string) string {
	p = filepath.ToSlash(p)
	if strings.ContainsAny(p, " \t\"'`\\()[]{},;") {
		return strconv.Quote(p)
	}
	return p
}

// Render returns the project's files, by path relative to the output directory, without
// writing them. The options must be complete.
func Render(o Options) (map[string][]byte, error) {
	gm, err := moduleOf(o.PeriscopePath)
	if err != nil {
		return nil, err
	}
	d := data{
		Name: o.Name, Module: o.Module, PeriscopeModule: PeriscopeModule, PeriscopePath: o.PeriscopePath,
		GoVersion: gm.goVersion, Namespace: Namespace, Issuer: Issuer, RegistrationLabel: RegistrationLabel,
		Image: o.Name + ":dev",
	}
	files := map[string][]byte{}
	err = fs.WalkDir(templates, "templates", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		text, err := templates.ReadFile(p)
		if err != nil {
			return err
		}
		t, err := template.New(p).Funcs(template.FuncMap{"modPath": modPath}).Option("missingkey=error").Parse(string(text))
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		if err := t.Execute(&buf, d); err != nil {
			return err
		}
		out := strings.TrimSuffix(strings.TrimPrefix(p, "templates/"), ".tmpl")
		content := buf.Bytes()
		if path.Ext(out) == ".go" {
			if content, err = format.Source(content); err != nil {
				return fmt.Errorf("formatting %s: %w", out, err)
			}
		}
		files[out] = content
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Periscope's go.sum holds the checksums of every module the project can need (pkg/extension
	// and, through the replace, Periscope's module graph), verified when Periscope was built.
	// Starting from it, `go mod tidy` keeps what the project uses and needs neither the checksum
	// database nor the network for them.
	sums, err := os.ReadFile(filepath.Join(o.PeriscopePath, "go.sum"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading Periscope's go.sum: %w", err)
	}
	if len(sums) > 0 {
		files["go.sum"] = sums
	}
	return files, nil
}

// Generate completes the options, renders the project and writes it into o.Output, which must
// not exist or be empty. It returns the paths written, relative to o.Output, sorted.
func Generate(o *Options) ([]string, error) {
	if err := o.Complete(); err != nil {
		return nil, err
	}
	files, err := Render(*o)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(o.Output)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("output %s: %w", o.Output, err)
	case len(entries) > 0:
		return nil, fmt.Errorf("output directory %s is not empty: refusing to overwrite it", o.Output)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		target := filepath.Join(o.Output, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return nil, err
		}
		// O_EXCL: never overwrite, even a file created since the emptiness check.
		f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return nil, err
		}
		_, werr := f.Write(files[name])
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return nil, werr
		}
	}
	return names, nil
}
