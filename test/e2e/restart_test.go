//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// pidOf reads the PID hack/local-up.sh recorded for a process.
func pidOf(name string) int {
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(cluster.LogsDir), "pids"))
	gomega.ExpectWithOffset(1, err).NotTo(gomega.HaveOccurred())
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == name {
			pid, err := strconv.Atoi(f[1])
			gomega.ExpectWithOffset(1, err).NotTo(gomega.HaveOccurred())
			return pid
		}
	}
	ginkgo.Fail("no PID recorded for " + name)
	return 0
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

var _ = ginkgo.Describe("kube-apiserver restarted under a running Periscope", func() {
	ginkgo.It("leaves Periscope running, and its objects converge on changes made after the restart", func(ctx context.Context) {
		periscopePID := pidOf("periscope")
		before := pidOf("kube-apiserver")
		cmd := exec.Command(filepath.Join("..", "..", "hack", "local-restart.sh"), "kube-apiserver")
		cmd.Env = append(os.Environ(), "LOCAL_DIR="+filepath.Dir(cluster.LogsDir))
		out, err := cmd.CombinedOutput()
		gomega.Expect(err).NotTo(gomega.HaveOccurred(), string(out))
		gomega.Expect(pidOf("kube-apiserver")).NotTo(gomega.Equal(before))
		gomega.Eventually(func() error {
			_, err := kube.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
			return err
		}, 2*time.Minute).Should(gomega.Succeed())

		failed := helm("Failed")
		failed["failureMessage"] = "made after the restart"
		setFeatures("team-a", "observability-sveltos-staging-1", failed)
		ginkgo.DeferCleanup(func() { setFeatures("team-a", "observability-sveltos-staging-1", helm("Provisioning")) })
		gomega.Eventually(func(g gomega.Gomega) {
			cr, err := periscope.VisibilityV1alpha1().ClusterReadinesses("team-a").Get(ctx, "staging-1", metav1.GetOptions{})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(cr.Status.Profiles[0].Message).To(gomega.Equal("Helm: made after the restart"))
		}, 2*time.Minute).Should(gomega.Succeed())
		gomega.Expect(alive(periscopePID)).To(gomega.BeTrue(), "Periscope exited while kube-apiserver restarted")
	}, ginkgo.NodeTimeout(5*time.Minute))
})
