#!/usr/bin/env bash
# Restarts one process of the local control plane (by the PID hack/local-up.sh recorded) with
# the same command line, and records its new PID. Used by the end-to-end tests to restart
# kube-apiserver under a running Periscope.
# Usage: LOCAL_DIR=... hack/local-restart.sh NAME     (etcd, kube-apiserver, periscope, ...)
set -o errexit -o nounset -o pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LOCAL_DIR=${LOCAL_DIR:-${root}/_output/local}
name=${1:?usage: local-restart.sh NAME}
pids="${LOCAL_DIR}/pids"
cmdfile="${LOCAL_DIR}/cmd/${name}"
[[ -f "${cmdfile}" ]] || { echo "no recorded command for ${name} in ${LOCAL_DIR}" >&2; exit 1; }

pid=$(awk -v n="${name}" '$1 == n {print $2}' "${pids}")
if [[ -n "${pid}" ]] && kill -0 "${pid}" 2>/dev/null; then
  kill -TERM "${pid}"
  for _ in $(seq 1 150); do kill -0 "${pid}" 2>/dev/null || break; sleep 0.1; done
  kill -0 "${pid}" 2>/dev/null && kill -KILL "${pid}"
fi

mapfile -d '' cmd < "${cmdfile}"
"${cmd[@]}" >> "${LOCAL_DIR}/logs/${name}.log" 2>&1 &
newpid=$!
awk -v n="${name}" -v p="${newpid}" '$1 == n {$2 = p} {print}' "${pids}" > "${pids}.tmp" && mv "${pids}.tmp" "${pids}"
echo "restarted ${name} (pid ${pid:-none} -> ${newpid})"
