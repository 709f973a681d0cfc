# Periscope. `make run` and `make test` are the two commands; the README explains the rest.
SHELL := /usr/bin/env bash
.DEFAULT_GOAL := build

LOCAL_DIR ?= $(CURDIR)/_output/local
DEMO ?= 1

.PHONY: build
build: ## Build periscope-apiserver into _output/bin.
	go build -o _output/bin/periscope-apiserver ./cmd/periscope-apiserver

.PHONY: controlplane
controlplane: ## Build (or reuse) etcd, kube-apiserver, kube-controller-manager and kubectl.
	hack/build-controlplane.sh

.PHONY: run
run: ## Start everything on loopback with demo data, in the foreground; Ctrl-C stops it.
	LOCAL_DIR=$(LOCAL_DIR) DEMO=$(DEMO) FOREGROUND=1 hack/local-up.sh

.PHONY: up
up: ## Like run, but detached; stop it with `make down`.
	LOCAL_DIR=$(LOCAL_DIR) DEMO=$(DEMO) hack/local-up.sh

.PHONY: down
down: ## Stop what `make up` started.
	LOCAL_DIR=$(LOCAL_DIR) hack/local-down.sh

.PHONY: test
test: verify test-unit test-e2e ## Everything CI runs: verify, unit tests, end-to-end suites.

.PHONY: test-unit
test-unit: ## Unit tests (no control plane).
	go test -race -count=1 ./...

.PHONY: test-e2e
test-e2e: ## Ginkgo end-to-end suites against a real local control plane (started and stopped here).
	hack/e2e.sh

.PHONY: test-load
test-load: ## The full load test: 500 watchers and 50 lists a second for 60 seconds (not part of make test).
	E2E_LOAD=full hack/e2e.sh -ginkgo.focus="Load on loopback"

.PHONY: codegen
codegen: ## Regenerate deepcopy, OpenAPI, clientset, listers and informers.
	hack/update-codegen.sh

.PHONY: verify
verify: ## Fail on stale generated code, untidy go.mod files, gofmt or go vet findings.
	hack/verify.sh

.PHONY: help
help:
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 14

.PHONY: bench
bench: ## Benchmarks at N=1,000 and 5,000 clusters into docs/benchmarks.md (about 12 minutes on 2 cores; not part of make test).
	hack/bench.sh

.PHONY: bench-micro
bench-micro: ## Micro-benchmarks (go test -bench, no control plane), in the format benchstat reads.
	hack/bench.sh micro
