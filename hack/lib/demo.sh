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

demo::capi_available() { # demo::capi_available STATUS REASON MESSAGE: a v1beta2 Cluster status
  printf '{"status":{"initialization":{"infrastructureProvisioned":true,"controlPlaneInitialized":true},"conditions":[%s]}}' \
    "$(demo::condition Available "$1" "$2" "$3")"
}

demo::features() { # demo::features FEATURE:STATUS[:MESSAGE]...: a ClusterSummary status
  local out="" sep="" f id st msg
  for f in "$@"; do
    IFS=: read -r id st msg <<< "${f}"
    out+="${sep}{\"featureID\":\"${id}\",\"status\":\"${st}\",\"failureMessage\":\"${msg}\"}"
    sep=","
  done
  printf '{"status":{"featureSummaries":[%s]}}' "${out}"
}

demo::load_fleet() {
  local dir
  dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../demo" && pwd)
  "${KUBECTL[@]}" apply -f "${dir}/clusters.yaml" >/dev/null
  "${KUBECTL[@]}" apply -f "${dir}/clustersummaries.yaml" >/dev/null

  demo::status cluster.cluster.x-k8s.io prod-1 team-a "$(demo::capi_available True Available "")"
  demo::status cluster.cluster.x-k8s.io prod-2 team-a "$(demo::capi_available True Available "")"
  demo::status cluster.cluster.x-k8s.io edge-1 team-b \
    '{"status":{"initialization":{"infrastructureProvisioned":true,"controlPlaneInitialized":false}}}'
  demo::status sveltoscluster staging-1 team-a '{"status":{"ready":true,"connectionStatus":"Healthy"}}'
  demo::status sveltoscluster dev-1 team-b '{"status":{"ready":true,"connectionStatus":"Down","failureMessage":"dial tcp 10.1.2.3:6443: i/o timeout"}}'

  demo::status clustersummary observability-capi-prod-1 team-a "$(demo::features "Helm:Failed:chart kube-prometheus-stack: timed out waiting for the condition")"
  demo::status clustersummary security-baseline-capi-prod-1 team-a "$(demo::features Resources:Provisioned)"
  demo::status clustersummary observability-capi-prod-2 team-a "$(demo::features Helm:Provisioned)"
  demo::status clustersummary security-baseline-capi-prod-2 team-a "$(demo::features Resources:Provisioned)"
  demo::status clustersummary p--team-a-apps-capi-prod-2 team-a "$(demo::features Kustomize:Provisioned)"
  demo::status clustersummary observability-sveltos-staging-1 team-a "$(demo::features Helm:Provisioning)"
}

demo::load_bundles() {
  local dir
  dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../demo" && pwd)
  "${KUBECTL[@]}" apply -f "${dir}/bundles-v1alpha1.yaml" -f "${dir}/bundledeployments-v1alpha1.yaml" >/dev/null

  demo::status bundle nginx-plain "" '{"status":{"phase":"Unpacked"}}'
  demo::status bundle broken-plain "" '{"status":{"phase":"Failing"}}'
  demo::status bundle prometheus-operator "" '{"status":{"phase":"Unpacking"}}'
  demo::status bundle team-overlay "" '{"status":{"phase":"Pending"}}'

  demo::status bundledeployment nginx "" "{\"status\":{\"conditions\":[$(demo::condition Installed True InstallationSucceeded 'instantiated bundle nginx-plain successfully')]}}"
  demo::status bundledeployment prometheus "" "{\"status\":{\"conditions\":[$(demo::condition Installed False InstallFailed 'rendered manifests contain a resource that already exists')]}}"
  demo::status bundledeployment dashboards "" "{\"status\":{\"conditions\":[$(demo::condition Installed True InstallationSucceeded 'instantiated bundle dashboards successfully')]}}"
}

demo::load() {
  KUBECTL=("$@")
  local dir
  dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../demo" && pwd)
  "${KUBECTL[@]}" apply -f "${dir}/workloads.yaml" >/dev/null
  demo::status deployment core rukpak-system '{"status":{"replicas":1,"updatedReplicas":1,"readyReplicas":1,"availableReplicas":1}}'
  demo::status deployment jsonnet-provisioner acme-system '{"status":{"replicas":2,"updatedReplicas":2,"readyReplicas":2,"availableReplicas":2}}'
  demo::load_bundles
  demo::load_fleet
}
