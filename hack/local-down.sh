#!/usr/bin/env bash
# Stops what hack/local-up.sh started, by the PIDs it recorded, newest first.
set -o nounset -o pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LOCAL_DIR=${LOCAL_DIR:-${root}/_output/local}
pids="${LOCAL_DIR}/pids"
[[ -f "${pids}" ]] || exit 0

tac "${pids}" | while read -r name pid; do
  kill -0 "${pid}" 2>/dev/null || continue
  kill -TERM "${pid}" 2>/dev/null
  for _ in $(seq 1 100); do
    kill -0 "${pid}" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "${pid}" 2>/dev/null; then
    echo "${name} (pid ${pid}) did not stop in 10s; killing it" >&2
    kill -KILL "${pid}" 2>/dev/null
  fi
  echo "stopped ${name} (pid ${pid})"
done
rm -f "${pids}"
