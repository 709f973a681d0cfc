#!/usr/bin/env bash
# Runs the ginkgo end-to-end suites against a real local control plane that it starts (with the
# demo data) in _output/e2e and stops afterwards, whatever the outcome. Arguments go to ginkgo
# (for example -ginkgo.focus="Load on loopback").
set -o errexit -o nounset -o pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export LOCAL_DIR=${E2E_LOCAL_DIR:-${root}/_output/e2e}
export DEMO=1

trap '"${root}/hack/local-down.sh"' EXIT
"${root}/hack/local-up.sh"

cd "${root}"
E2E_ENV="${LOCAL_DIR}/env" go test -tags e2e -count=1 -timeout 30m ./test/e2e/... -v -args -ginkgo.v "$@"
