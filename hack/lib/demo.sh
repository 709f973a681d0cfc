#!/usr/bin/env bash
# Loads the demo data: a realistic rukpak install with objects in every state. There is no
# kubelet and no provisioner, so the status of each object is written here.
# Usage: demo::load KUBECTL_CMD...   (for example: demo::load kubectl --kubeconfig FILE)

demo::status() { # demo::status KIND NAME [NAMESPACE] JSON
  local kind=$1 name=$2 ns=$3 json=$4
  local nsflag=()
  [[ -n "${ns}" ]] && nsflag=(-n "${ns}")
  "${KUBECTL[@]}" patch "${kind}" "${name}" "${nsflag[@]}" --subresource=status --type=merge -p "${json}" >/dev/null
}

demo::condition() { # demo::condition TYPE STATUS REASON MESSAGE
  printf '{"type":"%s","status":"%s","reason":"%s","message":"%s","lastTransitionTime":"%s"}' \
    "$1" "$2" "$3" "$4" "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
}

demo::load() {
  KUBECTL=("$@")
  local dir
  dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../demo" && pwd)
  "${KUBECTL[@]}" apply -f "${dir}/workloads.yaml" >/dev/null
  "${KUBECTL[@]}" apply -f "${dir}/bundles-v1alpha1.yaml" -f "${dir}/bundledeployments-v1alpha1.yaml" >/dev/null

  demo::status deployment core rukpak-system '{"status":{"replicas":1,"updatedReplicas":1,"readyReplicas":1,"availableReplicas":1}}'
  demo::status deployment jsonnet-provisioner acme-system '{"status":{"replicas":2,"updatedReplicas":2,"readyReplicas":2,"availableReplicas":2}}'

  demo::status bundle nginx-plain "" '{"status":{"phase":"Unpacked"}}'
  demo::status bundle broken-plain "" '{"status":{"phase":"Failing"}}'
  demo::status bundle prometheus-operator "" '{"status":{"phase":"Unpacking"}}'
  demo::status bundle team-overlay "" '{"status":{"phase":"Pending"}}'

  demo::status bundledeployment nginx "" "{\"status\":{\"conditions\":[$(demo::condition Installed True InstallationSucceeded 'instantiated bundle nginx-plain successfully')]}}"
  demo::status bundledeployment prometheus "" "{\"status\":{\"conditions\":[$(demo::condition Installed False InstallFailed 'rendered manifests contain a resource that already exists')]}}"
  demo::status bundledeployment dashboards "" "{\"status\":{\"conditions\":[$(demo::condition Installed True InstallationSucceeded 'instantiated bundle dashboards successfully')]}}"
}
