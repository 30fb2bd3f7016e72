#!/usr/bin/env bash
# The main job on the local lab. For now it compiles and prints every lab node's
# vLLM launch (playbooks/plan.yml on inventories/lab) without touching a host;
# the full site.yml run on simulated nodes replaces this with the lab issue.
# usage: scripts/lab.sh [extra ansible-playbook args]
set -euo pipefail
# shellcheck source=tests/harness/lib.sh
source "$(dirname "$0")/../tests/harness/lib.sh"
cd "$REPO_ROOT"
[[ $(id -u) == 0 ]] || die "run as root: the lab installs packages and starts dockerd"
timed host_packages
timed make_venv
drop_stale_collection_copy
ansible-playbook -i inventories/lab playbooks/plan.yml "$@"
