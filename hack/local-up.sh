#!/usr/bin/env bash
# Starts a local control plane on loopback (etcd, kube-apiserver, kube-controller-manager) and
# Periscope behind it as an aggregated API, installs the source CRDs and, unless DEMO=0, the
# demo data. Everything it starts is recorded by PID in $LOCAL_DIR/pids and stopped by
# hack/local-down.sh.
#
# Environment:
#   LOCAL_DIR   state directory (default _output/local); the kubeconfig is $LOCAL_DIR/kubeconfig
#   DEMO        1 (default) loads the demo data, 0 does not
#   FOREGROUND  1 keeps running until Ctrl-C, then stops everything (make run)
#   SHARED_CRDS the upstream CRDs to install (default ../shared/crds); when absent, the
#               project's minimal CRDs of test/crds are installed instead
set -o errexit -o nounset -o pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LOCAL_DIR=${LOCAL_DIR:-${root}/_output/local}
DEMO=${DEMO:-1}
FOREGROUND=${FOREGROUND:-0}
bin="${root}/_output/bin"
shared_crds=${SHARED_CRDS:-${root}/../shared/crds}

mkdir -p "${LOCAL_DIR}"
LOCAL_DIR=$(cd "${LOCAL_DIR}" && pwd)
pids="${LOCAL_DIR}/pids"
logs="${LOCAL_DIR}/logs"
pki="${LOCAL_DIR}/pki"

if [[ -s "${pids}" ]]; then
  while read -r _ pid; do
    if kill -0 "${pid}" 2>/dev/null; then
      echo "A local control plane is already running from ${LOCAL_DIR} (pid ${pid}); stop it with 'make down'." >&2
      exit 1
    fi
  done < "${pids}"
fi
rm -rf "${LOCAL_DIR}/etcd" "${logs}" "${pids}" "${LOCAL_DIR}/cmd"
mkdir -p "${logs}"
: > "${pids}"

"${root}/hack/build-controlplane.sh"
echo ">> building periscope-apiserver"
(cd "${root}" && go build -o "${bin}/periscope-apiserver" ./cmd/periscope-apiserver && go build -o "${bin}/localtool" ./hack/localtool \
  && go build -o "${bin}/approval-extension" ./examples/approval-extension)

down() { LOCAL_DIR="${LOCAL_DIR}" "${root}/hack/local-down.sh"; }
if [[ "${FOREGROUND}" == 1 ]]; then
  trap 'echo; down; exit 0' INT TERM
fi
trap 'status=$?; if [[ ${status} != 0 ]]; then echo "local-up failed; logs are in ${logs}" >&2; down; fi' EXIT

start() { # start NAME CMD...: runs CMD in the background, logs to $logs/NAME.log, records its PID
  local name=$1; shift
  "$@" > "${logs}/${name}.log" 2>&1 &
  echo "${name} $!" >> "${pids}"
  # The command line, NUL-separated, for hack/local-restart.sh.
  mkdir -p "${LOCAL_DIR}/cmd"
  printf '%s\0' "$@" > "${LOCAL_DIR}/cmd/${name}"
}

wait_for() { # wait_for DESCRIPTION SECONDS CMD...
  local what=$1 seconds=$2; shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    local name pid
    while read -r name pid; do
      if ! kill -0 "${pid}" 2>/dev/null; then
        echo "${name} exited while waiting for ${what}; its log ends with:" >&2
        tail -n 5 "${logs}/${name}.log" >&2
        return 1
      fi
    done < "${pids}"
    if ((SECONDS > deadline)); then
      echo "timed out after ${seconds}s waiting for ${what}" >&2
      return 1
    fi
    sleep 0.5
  done
}

"${bin}/localtool" certs "${pki}"
read -r etcd_port etcd_peer_port apiserver_port periscope_port extension_port <<< "$("${bin}/localtool" free-ports 5 | tr "\n" " ")"

echo ">> starting etcd on 127.0.0.1:${etcd_port}"
start etcd "${bin}/etcd" --name local --data-dir "${LOCAL_DIR}/etcd" \
  --listen-client-urls "http://127.0.0.1:${etcd_port}" --advertise-client-urls "http://127.0.0.1:${etcd_port}" \
  --listen-peer-urls "http://127.0.0.1:${etcd_peer_port}" --initial-advertise-peer-urls "http://127.0.0.1:${etcd_peer_port}" \
  --initial-cluster "local=http://127.0.0.1:${etcd_peer_port}" \
  --unsafe-no-fsync --log-level warn

echo ">> starting kube-apiserver on https://127.0.0.1:${apiserver_port}"
start kube-apiserver "${bin}/kube-apiserver" \
  --etcd-servers "http://127.0.0.1:${etcd_port}" \
  --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "${apiserver_port}" \
  --tls-cert-file "${pki}/apiserver.crt" --tls-private-key-file "${pki}/apiserver.key" \
  --client-ca-file "${pki}/ca.crt" \
  --authorization-mode RBAC \
  --service-account-issuer https://kubernetes.default.svc \
  --service-account-key-file "${pki}/sa.pub" --service-account-signing-key-file "${pki}/sa.key" \
  --service-cluster-ip-range 10.0.0.0/24 \
  --requestheader-client-ca-file "${pki}/front-proxy-ca.crt" \
  --requestheader-allowed-names front-proxy-client \
  --requestheader-username-headers X-Remote-User \
  --requestheader-group-headers X-Remote-Group \
  --requestheader-extra-headers-prefix X-Remote-Extra- \
  --proxy-client-cert-file "${pki}/front-proxy-client.crt" --proxy-client-key-file "${pki}/front-proxy-client.key" \
  --endpoint-reconciler-type none \
  --cert-dir "${LOCAL_DIR}/apiserver-certs"

kubeconfig="${LOCAL_DIR}/kubeconfig"
"${bin}/kubectl" config set-cluster local --kubeconfig "${kubeconfig}" \
  --server "https://127.0.0.1:${apiserver_port}" --certificate-authority "${pki}/ca.crt" --embed-certs >/dev/null
"${bin}/kubectl" config set-credentials admin --kubeconfig "${kubeconfig}" \
  --client-certificate "${pki}/admin.crt" --client-key "${pki}/admin.key" --embed-certs >/dev/null
"${bin}/kubectl" config set-context local --kubeconfig "${kubeconfig}" --cluster local --user admin >/dev/null
"${bin}/kubectl" config use-context local --kubeconfig "${kubeconfig}" >/dev/null
kubectl=("${bin}/kubectl" --kubeconfig "${kubeconfig}")

wait_for "kube-apiserver /readyz" 120 "${kubectl[@]}" get --raw /readyz

echo ">> starting kube-controller-manager"
start kube-controller-manager "${bin}/kube-controller-manager" \
  --kubeconfig "${kubeconfig}" --authentication-kubeconfig "${kubeconfig}" --authorization-kubeconfig "${kubeconfig}" \
  --bind-address 127.0.0.1 --secure-port 0 --leader-elect=false \
  --controllers clusterrole-aggregation-controller,namespace-controller,garbage-collector-controller,serviceaccount-controller,serviceaccount-token-controller \
  --service-account-private-key-file "${pki}/sa.key" --root-ca-file "${pki}/ca.crt" \
  --use-service-account-credentials=false

echo ">> installing source CRDs"
if [[ -d "${shared_crds}" ]]; then
  crd_dir="${shared_crds}"
  crd_source=upstream
  echo "   using the upstream CRDs of ${shared_crds}"
  "${kubectl[@]}" apply --server-side -f "${crd_dir}/core.rukpak.io_bundles.yaml" -f "${crd_dir}/core.rukpak.io_bundledeployments.yaml" >/dev/null
  for f in cluster.x-k8s.io_clusters lib.projectsveltos.io_sveltosclusters config.projectsveltos.io_clusterprofiles \
    config.projectsveltos.io_profiles config.projectsveltos.io_clustersummaries; do
    "${kubectl[@]}" apply --server-side -f "${crd_dir}/${f}.yaml" >/dev/null
  done
else
  crd_dir="${root}/test/crds"
  crd_source=minimal
  echo "   ../shared/crds is absent: using the project's minimal CRDs"
  "${kubectl[@]}" apply --server-side -f "${crd_dir}/rukpak-v1alpha1" -f "${crd_dir}/fleet" >/dev/null
fi
"${kubectl[@]}" wait --for condition=Established --timeout 60s crd/bundles.core.rukpak.io crd/bundledeployments.core.rukpak.io \
  crd/clusters.cluster.x-k8s.io crd/sveltosclusters.lib.projectsveltos.io crd/clusterprofiles.config.projectsveltos.io \
  crd/profiles.config.projectsveltos.io crd/clustersummaries.config.projectsveltos.io >/dev/null

echo ">> installing Periscope's RBAC from artifacts/"
for f in namespace serviceaccount clusterrole-sources clusterrolebinding-sources clusterrolebinding-auth-delegator \
  rolebinding-auth-reader clusterrole-reader-cluster clusterrole-reader-namespaced clusterrole-events clusterrolebinding-events \
  role-leader-election rolebinding-leader-election role-extension-registrations rolebinding-extension-registrations; do
  "${kubectl[@]}" apply -f "${root}/artifacts/${f}.yaml" >/dev/null
done
loopback_service() { # loopback_service NAME PORT: a Service in periscope-system that sends clients to localhost:PORT
  "${kubectl[@]}" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Service
metadata:
  name: $1
  namespace: periscope-system
spec:
  type: ExternalName
  externalName: localhost
  ports:
  - name: https
    port: $2
YAML
}
# The Service reaches Periscope on loopback: the aggregator dials localhost:<port> and checks
# the serving certificate for periscope.periscope-system.svc.
loopback_service periscope "${periscope_port}"

# Periscope runs as its ServiceAccount, so the artifacts' RBAC is what it gets.
wait_for "the periscope ServiceAccount" 30 "${kubectl[@]}" get serviceaccount periscope -n periscope-system
token=$("${kubectl[@]}" create token periscope -n periscope-system --duration 48h)
periscope_kubeconfig="${LOCAL_DIR}/periscope.kubeconfig"
"${bin}/kubectl" config set-cluster local --kubeconfig "${periscope_kubeconfig}" \
  --server "https://127.0.0.1:${apiserver_port}" --certificate-authority "${pki}/ca.crt" --embed-certs >/dev/null
"${bin}/kubectl" config set-credentials periscope --kubeconfig "${periscope_kubeconfig}" --token "${token}" >/dev/null
"${bin}/kubectl" config set-context local --kubeconfig "${periscope_kubeconfig}" --cluster local --user periscope >/dev/null
"${bin}/kubectl" config use-context local --kubeconfig "${periscope_kubeconfig}" >/dev/null

if [[ "${DEMO}" == 1 ]]; then
  echo ">> loading demo data"
  # shellcheck source=lib/demo.sh
  source "${root}/hack/lib/demo.sh"
  demo::load "${kubectl[@]}"
fi

if [[ "${DEMO}" == 1 ]]; then
  # The example readiness extension, on loopback like Periscope: an ExternalName Service sends
  # Periscope to localhost, and its certificate (signed by the local serving CA) names
  # approval-extension.periscope-system.svc.
  echo ">> starting the example readiness extension (approval-extension) on https://127.0.0.1:${extension_port}"
  start approval-extension "${bin}/approval-extension" --kubeconfig "${kubeconfig}" \
    --bind-address "127.0.0.1:${extension_port}" \
    --tls-cert-file "${pki}/approval-extension.crt" --tls-key-file "${pki}/approval-extension.key" --v 2
  loopback_service approval-extension "${extension_port}"
  # The registration of examples/, with the local CA and port filled in.
  ca_bundle=$(base64 -w0 < "${pki}/periscope-ca.crt")
  sed -e "s|caBundle: .*|caBundle: ${ca_bundle}|" -e "s|port: 443|port: ${extension_port}|" \
    "${root}/examples/approval-extension/deploy/registration.yaml" | "${kubectl[@]}" apply -f - >/dev/null
fi

echo ">> starting periscope-apiserver on https://127.0.0.1:${periscope_port}"
start periscope "${bin}/periscope-apiserver" \
  --bind-address 127.0.0.1 --secure-port "${periscope_port}" \
  --tls-cert-file "${pki}/periscope.crt" --tls-private-key-file "${pki}/periscope.key" \
  --kubeconfig "${periscope_kubeconfig}" \
  --authentication-kubeconfig "${periscope_kubeconfig}" --authorization-kubeconfig "${periscope_kubeconfig}" \
  --discovery-interval 2s --v 2

"${bin}/localtool" apiservice "${root}/artifacts/apiservice.yaml" "${pki}/periscope-ca.crt" "${periscope_port}" | "${kubectl[@]}" apply -f - >/dev/null
wait_for "the Periscope APIService to be Available" 120 "${kubectl[@]}" wait --for condition=Available --timeout 2s apiservice/v1alpha1.visibility.periscope.dev
wait_for "rukpakconfig/cluster" 60 "${kubectl[@]}" get rukpakconfig cluster
wait_for "Periscope's readyz" 60 "${kubectl[@]}" get clusterreadiness -A
if [[ "${DEMO}" == 1 ]]; then
  wait_for "the example extension to be discovered" 60 "${kubectl[@]}" wait --for condition=Ready --timeout 2s readinessextension/approval-extension
fi

cat > "${LOCAL_DIR}/env" <<ENV
LOCAL_DIR=${LOCAL_DIR}
KUBECONFIG=${kubeconfig}
KUBECTL=${bin}/kubectl
APISERVER_PORT=${apiserver_port}
PERISCOPE_PORT=${periscope_port}
PERISCOPE_KUBECONFIG=${periscope_kubeconfig}
PERISCOPE_BIN=${bin}/periscope-apiserver
LOGS_DIR=${logs}
PKI_DIR=${pki}
CRD_DIR=${crd_dir}
CRD_SOURCE=${crd_source}
DEMO=${DEMO}
ENV
trap - EXIT

rel_kubeconfig=${kubeconfig#"${root}/"}
cat <<MSG

Periscope is up. Try:

  export KUBECONFIG=${rel_kubeconfig} PATH=\$PWD/_output/bin:\$PATH
  kubectl get rukpakconfig
  kubectl get rukpakconfig -o wide
  kubectl get rukpakconfig cluster -o yaml
  kubectl explain rukpakconfig.status.classes
  kubectl get rukpakconfig -w          # then, in another shell:
  kubectl scale deployment core -n rukpak-system --replicas 0

  kubectl get clusterreadiness -A
  kubectl get clusterreadiness prod-1 -n team-a -o yaml
  kubectl get clusterreadiness -A -l env=prod --field-selector status.ready=false
  kubectl get clusterreadiness -A --watch   # then, in another shell:
  kubectl patch clustersummary observability-sveltos-staging-1 -n team-a --subresource status --type merge \
    -p '{"status":{"featureSummaries":[{"featureID":"Helm","status":"Provisioned"}]}}'
  kubectl wait --for condition=Ready clusterreadiness/staging-1 -n team-a --timeout 60s
  kubectl events -n team-a --for sveltoscluster/staging-1

  # A readiness extension (examples/approval-extension) is registered for namespaces labelled
  # periscope.dev/approvals=enabled: a cluster there is Ready only once a human approves it.
  kubectl get readinessextensions
  kubectl label namespace team-a periscope.dev/approvals=enabled
  kubectl get clusterreadiness -n team-a -o wide          # CHECKS 0/1: prod-2 waits for approval
  kubectl create configmap readiness-approvals -n team-a --from-literal prod-2=approved
  kubectl wait --for condition=Ready clusterreadiness/prod-2 -n team-a --timeout 60s

Logs: ${logs}
MSG

if [[ "${FOREGROUND}" == 1 ]]; then
  echo "Press Ctrl-C to stop everything."
  while true; do sleep 1; done
fi
