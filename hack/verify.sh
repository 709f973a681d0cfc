#!/usr/bin/env bash
# Fails when generated code is stale, a go.mod is untidy, or gofmt or go vet find anything.
set -o errexit -o nounset -o pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${root}"
status=0

echo ">> checking generated code"
generated=(pkg/generated pkg/apis hack/api-rules)
before=$(mktemp -d)
trap 'rm -rf "${before}"' EXIT
for p in "${generated[@]}"; do mkdir -p "${before}/${p}" && cp -a "${p}/." "${before}/${p}/"; done
hack/update-codegen.sh >/dev/null
for p in "${generated[@]}"; do
  if ! diff -r "${before}/${p}" "${p}" >/dev/null; then
    echo "generated code in ${p} is stale: run 'make codegen' and commit the result" >&2
    diff -r "${before}/${p}" "${p}" | head -20 >&2 || true
    status=1
  fi
done

echo ">> checking go.mod files are tidy"
for dir in . hack/tools/controlplane hack/tools/etcd hack/tools/benchchart; do
  if ! (cd "${dir}" && go mod tidy -diff >/dev/null); then
    echo "${dir}/go.mod is not tidy: run 'go mod tidy' there" >&2
    status=1
  fi
done

echo ">> gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go') 2>/dev/null || true)
if [[ -n "${unformatted}" ]]; then
  echo "gofmt would change: ${unformatted}" >&2
  status=1
fi

echo ">> go vet"
go vet ./... || status=1
go vet -tags e2e ./test/... || status=1

exit "${status}"
