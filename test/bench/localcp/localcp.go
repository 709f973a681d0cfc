// Package localcp drives the local control plane that hack/local-up.sh starts: it reads the
// environment file and the PIDs that script records, stops and restarts processes by PID
// (through hack/local-restart.sh), and builds clients for kube-apiserver and for Periscope's
// own port.
package localcp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Plane is a running local control plane.
type Plane struct {
	// Dir is the LOCAL_DIR the control plane was started with.
	Dir string
	// Root is the repository, for hack/local-restart.sh.
	Root string
	env  map[string]string
}

// Open reads $dir/env, written by hack/local-up.sh once everything is up.
func Open(root, dir string) (*Plane, error) {
	b, err := os.ReadFile(filepath.Join(dir, "env"))
	if err != nil {
		return nil, fmt.Errorf("read the control plane's environment (is it up?): %w", err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = v
		}
	}
	for _, k := range []string{"KUBECONFIG", "PERISCOPE_PORT", "PKI_DIR"} {
		if env[k] == "" {
			return nil, fmt.Errorf("%s/env has no %s", dir, k)
		}
	}
	return &Plane{Dir: dir, Root: root, env: env}, nil
}

// Env returns a variable of the environment file (KUBECONFIG, CRD_SOURCE, ...).
func (p *Plane) Env(key string) string { return p.env[key] }

// PID returns the PID recorded for a process (etcd, kube-apiserver, periscope, ...).
func (p *Plane) PID(name string) (int, error) {
	f, err := os.Open(filepath.Join(p.Dir, "pids"))
	if err != nil {
		return 0, fmt.Errorf("read pids: %w", err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) == 2 && fields[0] == name {
			pid, err := strconv.Atoi(fields[1])
			if err != nil {
				return 0, fmt.Errorf("pid of %s: %w", name, err)
			}
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no pid recorded for %s in %s/pids", name, p.Dir)
}

// Stop stops a process by its recorded PID (SIGTERM, then SIGKILL after 15s) and waits until
// it is gone. A process that is not running is not an error.
func (p *Plane) Stop(ctx context.Context, name string) error {
	pid, err := p.PID(name)
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return nil
		}
		return fmt.Errorf("stop %s (pid %d): %w", name, pid, err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			deadline = time.Now().Add(5 * time.Second)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// Restart restarts a process with the command line it was started with (stopping it first if
// it runs) and returns its new PID.
func (p *Plane) Restart(ctx context.Context, name string) (int, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(p.Root, "hack", "local-restart.sh"), name)
	cmd.Env = append(os.Environ(), "LOCAL_DIR="+p.Dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("restart %s: %w: %s", name, err, out)
	}
	return p.PID(name)
}

// AdminConfig returns the admin's client configuration for kube-apiserver, with client-side
// rate limits high enough that the benchmarks measure the servers, not the client.
func (p *Plane) AdminConfig() (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", p.env["KUBECONFIG"])
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", p.env["KUBECONFIG"], err)
	}
	cfg.QPS, cfg.Burst = 2000, 4000
	cfg.UserAgent = "periscope-bench"
	return cfg, nil
}

// PeriscopeConfig returns a configuration that reaches Periscope's own port directly (not
// through kube-apiserver), as the admin: for /readyz, /metrics and /debug/pprof.
func (p *Plane) PeriscopeConfig() (*rest.Config, error) {
	cfg, err := p.AdminConfig()
	if err != nil {
		return nil, err
	}
	cfg.Host = "https://127.0.0.1:" + p.env["PERISCOPE_PORT"]
	cfg.TLSClientConfig.CAData = nil
	cfg.TLSClientConfig.CAFile = filepath.Join(p.env["PKI_DIR"], "periscope-ca.crt")
	return cfg, nil
}

// OwnConnections makes clients built from cfg use connections of their own. client-go shares
// one transport (and so its connections) between equal configurations; a configuration with
// its own dialer gets its own transport. The benchmark's watchers are spread over a few such
// clients, as many real clients would be, instead of queueing on one HTTP/2 connection.
func OwnConnections(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	c.Dial = d.DialContext
	return c
}
