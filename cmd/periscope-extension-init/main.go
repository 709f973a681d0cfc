// Command periscope-extension-init writes a new Periscope readiness extension project, as
// kubebuilder init does for controllers:
//
//	periscope-extension-init --name my-check [--module example.com/my-check] [--output ./my-check] [--periscope-path <checkout>]
//
// The project has go.mod, main.go with one handler named after --name (built on
// periscope.dev/periscope/pkg/extension), main_test.go, a Makefile (build, test, run,
// docker-build, deploy), a Dockerfile, deploy/*.yaml (ServiceAccount, Deployment, Service,
// cert-manager Certificate, registration ConfigMap) and a README. It refuses a non-empty output
// directory, then runs `go mod tidy` in the project unless --skip-tidy.
//
// Periscope's module is not published, so the go.mod replaces periscope.dev/periscope with a
// local checkout: --periscope-path, or by default the checkout the working directory is in, or
// else the checkout this binary was built from (recorded in it unless built with -trimpath).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"periscope.dev/periscope/pkg/scaffold"
)

func main() {
	var o scaffold.Options
	var skipTidy bool
	fs := flag.NewFlagSet("periscope-extension-init", flag.ContinueOnError)
	fs.StringVar(&o.Name, "name", "", "Name of the extension and of its handler: a DNS label such as my-check (required).")
	fs.StringVar(&o.Module, "module", "", "Go module path of the new project (default example.com/<name>).")
	fs.StringVar(&o.Output, "output", "", "Directory to write; must not exist or be empty (default ./<name>).")
	fs.StringVar(&o.PeriscopePath, "periscope-path", "", "Periscope checkout that go.mod's replace directive points at (default: the checkout holding the working directory, else the one this binary was built from).")
	fs.BoolVar(&skipTidy, "skip-tidy", false, "Do not run go mod tidy in the new project.")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: periscope-extension-init --name my-check [flags]\n\nWrites a new Periscope readiness extension project.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		if err == flag.ErrHelp {
			return
		}
		os.Exit(2)
	}
	if o.Name == "" || fs.NArg() > 0 {
		fs.Usage()
		os.Exit(2)
	}
	files, err := scaffold.Generate(&o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "periscope-extension-init:", err)
		os.Exit(1)
	}
	for _, f := range files {
		fmt.Println("wrote", filepath.Join(o.Output, f))
	}
	fmt.Println("module", o.Module, "builds against the Periscope checkout", o.PeriscopePath)
	if !skipTidy {
		cmd := exec.Command("go", "mod", "tidy")
		cmd.Dir, cmd.Stdout, cmd.Stderr = o.Output, os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "periscope-extension-init: go mod tidy in %s: %v (the project is written; run it yourself)\n", o.Output, err)
			os.Exit(1)
		}
	}
	fmt.Printf("\nNext: cd %s && make build test run; see its README.md to deploy and register it.\n", o.Output)
}
