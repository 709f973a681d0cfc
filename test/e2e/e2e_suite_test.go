//go:build e2e

// Package e2e holds the ginkgo end-to-end suites. They run against the real local control
// plane that hack/e2e.sh starts (etcd, kube-apiserver, kube-controller-manager and Periscope
// behind an APIService) and talk to Periscope only through kube-apiserver, as users do.
package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	periscopeclient "periscope.dev/periscope/pkg/generated/clientset/versioned"
)

// env is what hack/local-up.sh wrote about the running control plane.
type env struct {
	Kubeconfig    string
	Kubectl       string
	PeriscopePort string
	PKIDir        string
	CRDDir        string
	// CRDSource is "upstream" (../shared/crds) or "minimal" (test/crds).
	CRDSource string
	// PeriscopeBin and PeriscopeKubeconfig start more replicas; LogsDir keeps their logs.
	PeriscopeBin        string
	PeriscopeKubeconfig string
	LogsDir             string
}

var (
	cluster    env
	restConfig *rest.Config
	kube       kubernetes.Interface
	dyn        dynamic.Interface
	disco      discovery.DiscoveryInterface
	periscope  periscopeclient.Interface
)

func TestE2E(t *testing.T) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	gomega.SetDefaultEventuallyTimeout(30 * time.Second)
	gomega.SetDefaultEventuallyPollingInterval(200 * time.Millisecond)
	ginkgo.RunSpecs(t, "Periscope end-to-end")
}

var _ = ginkgo.BeforeSuite(func() {
	path := os.Getenv("E2E_ENV")
	gomega.Expect(path).NotTo(gomega.BeEmpty(), "E2E_ENV must name the env file of a running local control plane (run hack/e2e.sh)")
	values, err := readEnvFile(path)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	cluster = env{
		Kubeconfig:          values["KUBECONFIG"],
		Kubectl:             values["KUBECTL"],
		PeriscopePort:       values["PERISCOPE_PORT"],
		PKIDir:              values["PKI_DIR"],
		CRDDir:              values["CRD_DIR"],
		CRDSource:           values["CRD_SOURCE"],
		PeriscopeBin:        values["PERISCOPE_BIN"],
		PeriscopeKubeconfig: values["PERISCOPE_KUBECONFIG"],
		LogsDir:             values["LOGS_DIR"],
	}
	if cluster.CRDSource == "upstream" {
		ginkgo.GinkgoWriter.Printf("Source CRDs: the upstream CRDs of %s\n", cluster.CRDDir)
	} else {
		ginkgo.GinkgoWriter.Printf("Source CRDs: ../shared/crds is absent, using the project's minimal CRDs of %s\n", cluster.CRDDir)
	}
	restConfig, err = clientcmd.BuildConfigFromFlags("", cluster.Kubeconfig)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	kube = kubernetes.NewForConfigOrDie(restConfig)
	dyn = dynamic.NewForConfigOrDie(restConfig)
	disco = discovery.NewDiscoveryClientForConfigOrDie(restConfig)
	periscope = periscopeclient.NewForConfigOrDie(restConfig)
})

func readEnvFile(path string) (map[string]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	values := map[string]string{}
	scanner := bufio.NewScanner(bytes.NewReader(raw))
	for scanner.Scan() {
		if k, v, ok := strings.Cut(scanner.Text(), "="); ok {
			values[k] = v
		}
	}
	return values, scanner.Err()
}

// kubectl runs the project's own kubectl against the local control plane.
func kubectl(args ...string) (string, error) {
	cmd := exec.Command(cluster.Kubectl, append([]string{"--kubeconfig", cluster.Kubeconfig}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// kubectlCommand returns a kubectl command for gexec.
func kubectlCommand(args ...string) *exec.Cmd {
	return exec.Command(cluster.Kubectl, append([]string{"--kubeconfig", cluster.Kubeconfig}, args...)...)
}
