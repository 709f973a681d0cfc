#!/usr/bin/env bash
# Regenerates everything under pkg/generated and the deepcopy functions of the API types with
# k8s.io/code-generator's kube_codegen.sh (the version pinned in go.mod).
set -o errexit -o nounset -o pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${root}"
codegen_pkg=$(go list -m -f '{{.Dir}}' k8s.io/code-generator)
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
