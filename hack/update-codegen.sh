#!/usr/bin/env bash
# Regenerates everything under pkg/generated and the deepcopy functions of the API types with
# k8s.io/code-generator's kube_codegen.sh (the version pinned in go.mod).
set -o errexit -o nounset -o pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${root}"
# On a fresh machine the module is not in the module cache yet: download it first.
go mod download k8s.io/code-generator
codegen_pkg=$(go list -m -f '{{.Dir}}' k8s.io/code-generator)
if [[ ! -f "${codegen_pkg}/kube_codegen.sh" ]]; then
  echo "kube_codegen.sh not found in k8s.io/code-generator (${codegen_pkg:-not downloaded})" >&2
  exit 1
fi
module=$(go list -m)

# shellcheck source=/dev/null
source "${codegen_pkg}/kube_codegen.sh"

kube::codegen::gen_helpers \
  --boilerplate "${root}/hack/boilerplate.go.txt" \
  "${root}/pkg/apis"

kube::codegen::gen_openapi \
  --output-dir "${root}/pkg/generated/openapi" \
  --output-pkg "${module}/pkg/generated/openapi" \
  --report-filename "${root}/hack/api-rules/violation_exceptions.list" \
  --output-model-name-file zz_generated.model_name.go \
  --update-report \
  --boilerplate "${root}/hack/boilerplate.go.txt" \
  "${root}/pkg/apis"

kube::codegen::gen_client \
  --with-watch \
  --output-dir "${root}/pkg/generated" \
  --output-pkg "${module}/pkg/generated" \
  --boilerplate "${root}/hack/boilerplate.go.txt" \
  "${root}/pkg/apis"
