#!/usr/bin/env bash
# The benchmarks of docs/benchmarks.md (make bench). Runs the micro-benchmarks, starts a local
# control plane without demo data in $LOCAL_DIR, runs test/bench/cmd/periscope-bench (fixtures
# at each scale, then every measurement), stops the control plane by PID (also on failure), and
# draws the charts with hack/tools/benchchart.
#
# Usage: hack/bench.sh          the whole benchmark (make bench)
#        hack/bench.sh micro    only the micro-benchmarks, to stdout (make bench-micro)
#
# Environment (the defaults are the issue's full run; shrink them for a smoke run, for example
# BENCH_SCALES=200 BENCH_NOTIFY_SAMPLES=20 BENCH_FANOUT_WATCHERS=100 BENCH_CHURN_RATES=50,100):
#   LOCAL_DIR                  the control plane's directory (_output/bench)
#   BENCH_OUT                  where benchmarks.{json,md}, benchmarks-micro.txt and the charts go (docs)
#   BENCH_MICRO                0 skips the micro-benchmarks (1)
#   BENCH_MICRO_COUNT          go test -count of the micro-benchmarks (6)
#   BENCH_MICRO_TIME           go test -benchtime (500ms)
#   BENCH_SCALES               fleet sizes, increasing (1000,5000)
#   BENCH_SEED                 the fixtures' seed (1)
#   BENCH_LOAD_WORKERS         concurrent creates (24)
#   BENCH_SYNC_STARTS          Periscope starts per scale (3)
#   BENCH_LIST_SAMPLES         samples per kind of list (15), at least BENCH_LIST_MIN_SAMPLES (5)
#                              once a kind has used BENCH_LIST_BUDGET (60s)
#   BENCH_NOTIFY_SAMPLES       notification samples (200); BENCH_POLL_INTERVAL of the polling model (10s)
#   BENCH_FANOUT_WATCHERS      concurrent watchers (1000), BENCH_FANOUT_ROUNDS (5),
#                              BENCH_FANOUT_CONNECTIONS client connections they share (8)
#   BENCH_CHURN_RATES          changes per second to try (50,100,200,400,800,1600), BENCH_CHURN_STEP
#                              per rate (10s), BENCH_CHURN_LAG_BOUND at p99 (1s), BENCH_CHURN_SENDERS (64)
#   BENCH_CHURN_MODE           retry: each change reports a failed attempt, Ready unchanged (retry);
#                              ready: each change flips a cluster's Ready (and Periscope records an Event)
#   BENCH_WORK_CLUSTERS        clusters changed per kind of event in the work count (20)
#   BENCH_SKIP                 measurements to skip: memory,list,work,notify,fanout,churn
set -o errexit -o nounset -o pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${root}"
micro_pkgs=(./pkg/readiness ./pkg/store ./pkg/registry/visibility/clusterreadiness)

micro() {
  go test -run '^$' -bench . -benchmem -count "${BENCH_MICRO_COUNT:-6}" -benchtime "${BENCH_MICRO_TIME:-500ms}" "${micro_pkgs[@]}"
}

if [[ "${1:-}" == micro ]]; then
  micro
  exit 0
fi

LOCAL_DIR=${LOCAL_DIR:-${root}/_output/bench}
out=${BENCH_OUT:-${root}/docs}
mkdir -p "${out}" "${LOCAL_DIR}"
out=$(cd "${out}" && pwd)
start=${SECONDS}

status=0
micro_flag=()
if [[ "${BENCH_MICRO:-1}" == 1 ]]; then
  # First, while nothing else runs on the machine. A failure is reported at the end; the
  # benchmarks that ran are kept.
  echo ">> micro-benchmarks"
  micro | tee "${out}/benchmarks-micro.txt" || { echo "micro-benchmarks failed" >&2; status=1; }
  micro_flag=(-micro "${out}/benchmarks-micro.txt")
fi

echo ">> building periscope-bench"
go build -o "${root}/_output/bin/periscope-bench" ./test/bench/cmd/periscope-bench

down() { LOCAL_DIR="${LOCAL_DIR}" "${root}/hack/local-down.sh"; }
trap down EXIT
echo ">> starting the control plane in ${LOCAL_DIR}"
LOCAL_DIR="${LOCAL_DIR}" DEMO=0 "${root}/hack/local-up.sh" > "${LOCAL_DIR}/local-up.log" 2>&1 ||
  { tail -n 20 "${LOCAL_DIR}/local-up.log" >&2; exit 1; }

"${root}/_output/bin/periscope-bench" run -local-dir "${LOCAL_DIR}" \
  -out "${out}/benchmarks.json" -markdown "${out}/benchmarks.md" -profiles "${LOCAL_DIR#"${root}/"}/profiles" "${micro_flag[@]}" || status=$?
down
trap - EXIT

if [[ -s "${out}/benchmarks.json" ]]; then
  echo ">> charts"
  (cd hack/tools/benchchart && go run . -in "${out}/benchmarks.json" -out "${out}") || status=$?
fi
echo ">> done in $(((SECONDS - start) / 60))m$(((SECONDS - start) % 60))s: ${out}/benchmarks.md (exit ${status})"
exit "${status}"
