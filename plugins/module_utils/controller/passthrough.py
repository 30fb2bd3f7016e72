# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pass-throughs (vllm_args, vllm_site_args, vllm_env, vllm_site_env) sorted by vLLM's own surface.

Every flag of the pinned vLLM and every environment name is one of three kinds:
- owned: the compiler writes it (cluster.OWNED_FLAGS, the node's and the weights' env); the inventory may not;
- sensitive: it changes the pin, the staged source, the layout, the endpoint or the exposure; the inventory may
  set it only where vllm_allow_sensitive names it, and the plan then warns what it opens;
- tunable: the rest, typed and bounded by the surface (vllm_surface.value_problem).
A flag or name this file does not know by name is sorted by its shape (a path, a URL, a plugin, a port, a host:
sensitive), so a new vLLM release cannot add an unreviewed way past the compiler. A few flags name a second
model; the collection pins and stages one repository per cluster, so those are refused outright. No Ansible
imports."""

from __future__ import annotations

import re
from typing import Dict, Optional

SENSITIVE, TUNABLE = "sensitive", "tunable"
# the opt-in variable: a list of flag names (without dashes) and env names
ALLOW = "vllm_allow_sensitive"

# flag -> what setting it opens
SENSITIVE_FLAGS: Dict[str, str] = {
    # the pin and the staged source
    "load-format": "reads the weights another way than from the staged, verified snapshot",
    "model-loader-extra-config": "passes options to the weights' loader",
    "download-dir": "reads and writes weights outside the staged cache",
    "ignore-patterns": "changes which staged files are loaded",
    "hf-overrides": "overrides the pinned model's own config",
    "generation-config": "reads the generation defaults from another folder",
    "fingerprint-mode": "changes how vLLM fingerprints the model",
    "fingerprint-value": "changes how vLLM fingerprints the model",
    # the layout
    "data-parallel-backend": "replaces the compiled data-parallel backend (mp) and its rendezvous",
    "distributed-executor-backend": "replaces the executor the compiled layout was planned for",
    "data-parallel-multi-port-external-lb": "opens one API port per rank beside the compiled one",
    "data-parallel-supervisor-port": "opens another port for the data-parallel supervisor",
    "device-ids": "picks other GPUs than the compiled layout counts",
    "enable-elastic-ep": "lets the expert-parallel group change size at run time",
    # the endpoint
    "uds": "serves the API on a Unix socket instead of the compiled port that Prometheus and the router reach",
    "grpc": "serves a gRPC API beside the compiled one",
    "grpc-port": "opens another API port",
    "root-path": "moves the API under another path than the router, smoke test and Prometheus use",
    "ssl-keyfile": "serves TLS with a key file from the container",
    "ssl-certfile": "serves TLS with a certificate from the container",
    "ssl-ca-certs": "serves TLS with CA certificates from the container",
    "ssl-cert-reqs": "changes TLS client checks",
    "ssl-ciphers": "changes TLS ciphers",
    "enable-ssl-refresh": "reloads TLS files at run time",
    # the exposure
    "allowed-local-media-path": "lets every API client read files of the container",
    "allowed-media-domains": "lets the server fetch media from other domains",
    "allowed-origins": "widens CORS for browsers",
    "allowed-methods": "widens CORS for browsers",
    "allowed-headers": "widens CORS for browsers",
    "allow-credentials": "sends credentials with cross-origin requests",
    "middleware": "imports Python middleware into the API server",
    "tool-server": "lets the server call out to tool servers",
    "trust-request-chat-template": "lets any client send a chat template that the server renders",
    "trust-request-mm-kwargs": "lets any client pass processor arguments",
    "enable-tokenizer-info-endpoint": "opens an endpoint that returns the tokenizer's files",
    "enable-sleep-mode": "opens the engine's sleep and wake endpoints (with VLLM_SERVER_DEV_MODE)",
    "otlp-traces-endpoint": "sends request traces to another host",
    "kv-events-config": "publishes KV-cache events on a socket",
    "ec-transfer-config": "connects the engine to another cache transfer peer",
    "weight-transfer-config": "lets weights be pushed into the running engine",
    "profiler-config": "writes profiles into the container",
    "log-config-file": "reads the logging config from another file",
    "enable-lora": "lets the server load adapters",
    "lora-modules": "loads adapters from outside the staged snapshot",
    "default-mm-loras": "loads adapters from outside the staged snapshot",
    # code that the inventory would load into the server
    "tool-parser-plugin": "imports a Python file as a tool parser",
    "reasoning-parser-plugin": "imports a Python file as a reasoning parser",
    "io-processor-plugin": "imports a plugin into the server",
    "logits-processors": "imports Python classes into the engine",
    "worker-cls": "replaces the engine's worker class",
    "worker-extension-cls": "imports a worker extension",
    "scheduler-cls": "replaces the engine's scheduler class",
    "model-class-overrides": "replaces the model's classes",
    "chat-template": "renders another chat template than the pinned model's",
    "mm-encoder-fp8-scale-path": "reads scales from another file",
    "mm-encoder-fp8-scale-save-path": "writes scales into the container",
}
# flags that name a second model (a draft, a tokenizer, a config): refused, even with vllm_allow_sensitive
SECOND_MODEL_FLAGS: Dict[str, str] = {
    "tokenizer": "a tokenizer from another repository",
    "hf-config-path": "a config from another repository",
    "speculative-config": "a draft model",
    "spec-model": "a draft model",
}
# flags that re-pin a part of the model: only the cluster's own commit is accepted
PIN_FLAGS = ("code-revision", "tokenizer-revision")
# names whose shape says they reach past the compiler (a path, a URL, a plugin, a host, a port, a secret)
_SENSITIVE_FLAG_SHAPE = re.compile(
    r"(\A|-)(path|dir|file|folder|url|endpoint|plugin|cls|class|module|host|addr|address|port|domain|origin|cert|"
    r"template)s?(-|\Z)|(\A|-)(key|token|secret|password)\Z")
# reviewed names of that shape that only tune the engine
_TUNABLE_SHAPED = frozenset({"chat-template-content-format", "default-chat-template-kwargs",
                             "disable-access-log-for-endpoints", "lora-target-modules", "max-lora-cls-labels"})

# env name -> what setting it opens
SENSITIVE_ENV: Dict[str, str] = {
    "VLLM_SERVER_DEV_MODE": "opens vLLM's development endpoints, which the API key does not cover",
    "VLLM_ALLOW_INSECURE_SERIALIZATION": "lets peers send pickled objects that run code",
    "VLLM_ALLOW_RUNTIME_LORA_UPDATING": "lets API clients load adapters at run time",
    "VLLM_PLUGINS": "chooses which plugins the server imports",
    "VLLM_USE_MODELSCOPE": "downloads the model from ModelScope instead of the staged snapshot",
    "VLLM_RPC_BASE_PATH": "moves the engine's sockets",
    "VLLM_PORT": "moves the engine's internal ports",
    "VLLM_LOOPBACK_IP": "moves the engine's internal address",
    "VLLM_ENABLE_RESPONSES_API_STORE": "keeps every response in the server's memory",
    "VLLM_MEDIA_URL_ALLOW_REDIRECTS": "lets media fetches follow redirects to other hosts",
    "VLLM_USAGE_STATS_SERVER": "sends usage statistics to another server",
    "VLLM_SKIP_MODEL_NAME_VALIDATION": "serves requests for any model name",
    "VLLM_TRACE_FUNCTION": "traces every function call into the container",
    "CUDA_VISIBLE_DEVICES": "hides GPUs from the compiled layout",
    "HIP_VISIBLE_DEVICES": "hides GPUs from the compiled layout",
    "ROCR_VISIBLE_DEVICES": "hides GPUs from the compiled layout",
    "NVIDIA_VISIBLE_DEVICES": "hides GPUs from the compiled layout",
    "LD_PRELOAD": "loads a library into every process",
    "LD_LIBRARY_PATH": "loads libraries from other folders",
    "PYTHONPATH": "imports Python from other folders",
    "PYTHONSTARTUP": "runs a Python file at start",
    "HF_ENDPOINT": "downloads from another hub than the staged snapshot",
    "HF_HUB_OFFLINE": "lets the node download from the hub",
}
# names of a path's shape that point inside the container only: the compilers' caches, which the compile cache's
# mount holds (launch.COMPILE_CACHE_ENV) and a profile or the inventory may move
TUNABLE_ENV = frozenset({"VLLM_CACHE_ROOT", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR"})
# the prefixes of the libraries below vLLM whose variables only tune them
LIBRARY_PREFIXES = ("NCCL_", "GLOO_", "NVSHMEM_", "UCX_", "NIXL_", "RCCL_", "HSA_", "HIP_", "ROCM_", "AITER_",
                    "TORCH_", "TORCHINDUCTOR_", "PYTORCH_", "OMP_", "MKL_", "KMP_", "HF_", "TRANSFORMERS_",
                    "SAFETENSORS_", "CUDA_", "NVIDIA_", "TRITON_", "EP_", "TOKENIZERS_", "MOONCAKE_", "DEEP_EP_",
                    "FLASHINFER_", "MORI_", "CUTE_", "CUTLASS_")
_SENSITIVE_ENV_SHAPE = re.compile(r"(PATH|DIR|FOLDER|ROOT|URL|ENDPOINT|HOST|_IP|ADDR|ADDRESS|PORT|PLUGINS?|"
                                  r"SERVER|FILE|SO)\Z")


def flag_kind(flag: str) -> str:
    """sensitive or tunable for a flag of the surface (without dashes) that the compiler does not own."""
    if flag in SENSITIVE_FLAGS or flag in SECOND_MODEL_FLAGS or flag in PIN_FLAGS:
        return SENSITIVE
    if flag.startswith("no-"):
        return TUNABLE   # vLLM's negation of a boolean: it turns a feature off
    if flag not in _TUNABLE_SHAPED and _SENSITIVE_FLAG_SHAPE.search(flag):
        return SENSITIVE
    return TUNABLE


def flag_opens(flag: str) -> str:
    return (SENSITIVE_FLAGS.get(flag) or SECOND_MODEL_FLAGS.get(flag)
            or "takes, by its name, a path, an address, a plugin or a secret, which the compiler does not check")


def env_kind(name: str, known: frozenset) -> str:
    """sensitive or tunable for an environment name the compiler does not own; `known` is the pinned vLLM's own
    env list."""
    if name in TUNABLE_ENV:
        return TUNABLE
    if name in SENSITIVE_ENV:
        return SENSITIVE
    if _SENSITIVE_ENV_SHAPE.search(name):
        return SENSITIVE
    if name in known or name.startswith(LIBRARY_PREFIXES):
        return TUNABLE
    return SENSITIVE   # neither vLLM's nor a library's that the collection knows


def env_opens(name: str, known: frozenset) -> str:
    if name in SENSITIVE_ENV:
        return SENSITIVE_ENV[name]
    if _SENSITIVE_ENV_SHAPE.search(name):
        return "takes, by its name, a path, an address or a plugin, which the compiler does not check"
    return "is read by neither the pinned vLLM nor any library the collection knows"


def second_model(flag: str, value: object) -> Optional[str]:
    """What second model a flag's value names, else None (a speculative method without a model is fine)."""
    if flag == "speculative-config":
        if isinstance(value, dict):
            return SECOND_MODEL_FLAGS[flag] if value.get("model") not in (None, "") else None
        text = str(value)
        return None if '"model"' not in text and "'model'" not in text else SECOND_MODEL_FLAGS[flag]
    return SECOND_MODEL_FLAGS.get(flag)
