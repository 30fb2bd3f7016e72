# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the plain variables (vllm_args, vllm_site_args, vllm_env, vllm_site_env) and the host paths may
hold, checked before the launch is compiled: env names and values that would rewrite vllm.env, secrets
under any name vLLM or huggingface_hub reads them by, values that look like tokens, and host paths that
would break a volume. No Ansible imports."""

from __future__ import annotations

import re
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.controller.cluster import (
    CLUSTER_DEFAULTS, SECRET_ENV, Cluster, ClusterError, raise_all)
from ansible_collections.inferops.vllm.plugins.module_utils.controller.wrong_values import shown_hosts
from ansible_collections.inferops.vllm.plugins.module_utils.controller import redact, site_policy, vllm_surface

# vllm_serve writes vllm.env as KEY=VALUE lines, read by community.docker's parse_env_file (docker_container's
# env_file): one variable per line, split at the first "=", the line stripped of blanks.
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
LINE_BREAKERS = {"\n": "a newline", "\r": "a carriage return", "\0": "a NUL byte"}

# Env names read as credentials -> the secret variable that holds it (None: the collection has none).
# vLLM 0.32 vllm/envs.py: VLLM_API_KEY, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY (tensorizer's S3);
# huggingface_hub utils/_auth.py: HF_TOKEN, then HUGGING_FACE_HUB_TOKEN; constants.py: OAUTH_CLIENT_SECRET;
# vLLM's run:ai streamer and tensorizer load from S3 through boto3's AWS_* keys; transformers_utils/repo_utils.py:
# MODELSCOPE_API_TOKEN; entrypoints: OPENAI_API_KEY (the CLI client), EXA_API_KEY (the browsing tool).
CREDENTIAL_ENV: Dict[str, Optional[str]] = {
    "HF_TOKEN": "vllm_hf_token", "HUGGING_FACE_HUB_TOKEN": "vllm_hf_token", "VLLM_API_KEY": "vllm_api_key",
    "S3_ACCESS_KEY_ID": None, "S3_SECRET_ACCESS_KEY": None, "AWS_ACCESS_KEY_ID": None,
    "AWS_SECRET_ACCESS_KEY": None, "AWS_SESSION_TOKEN": None, "OAUTH_CLIENT_SECRET": None,
    "HF_OIDC_ID_TOKEN": None, "MODELSCOPE_API_TOKEN": None, "OPENAI_API_KEY": None, "EXA_API_KEY": None,
}
CREDENTIAL_ENV.update(SECRET_ENV)
# any other name that says it holds a credential; not the switches whose names end like one
CREDENTIAL_NAME = re.compile(r"(^|_)(TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|ACCESS_KEY|SECRET_KEY|ACCESS_KEY_ID)\Z")
NOT_CREDENTIALS = frozenset({"HF_HUB_DISABLE_IMPLICIT_TOKEN"})
# Flags of the vLLM surface that carry a credential (derived from its names: --api-key, --hf-token)
CREDENTIAL_FLAG = re.compile(r"-(key|token|secret|password)\Z")
SECRET_FOR_FLAG = {"api-key": "vllm_api_key", "hf-token": "vllm_hf_token"}
# values that look like a Hugging Face or OpenAI-style token
TOKEN_VALUE = re.compile(r"\A(hf_[A-Za-z0-9]{16,}|sk-[A-Za-z0-9_-]{16,})\Z")
# host paths that become docker volumes (host:container[:mode])
VOLUME_VARS = ("vllm_model_cache_dir", "vllm_compile_cache_dir")
# of those, the ones an empty value turns off
OPTIONAL_VOLUME_VARS = ("vllm_compile_cache_dir",)


def credential_flags(options: Iterable[str]) -> Dict[str, Optional[str]]:
    """{flag without dashes: its secret variable or None} for every credential flag of a vLLM surface."""
    return {flag[2:]: SECRET_FOR_FLAG.get(flag[2:]) for flag in options
            if flag.startswith("--") and not flag.startswith("--no-") and CREDENTIAL_FLAG.search(flag)}


def _secret_fix(secret: Optional[str], what: str) -> str:
    if secret:
        return "remove it and set %s (ansible-vault); vllm_serve writes it only to the 0600 env file" % secret
    return ("remove it: the collection keeps only vllm_hf_token and vllm_api_key as secrets, so %s would land in "
            "the review files and vllm.yaml; give the nodes that credential outside the plan (an instance role, a "
            "credentials file)" % what)


def env_problems(variable: str, env: Mapping[Any, Any], where: str) -> List[ClusterError]:
    out = []
    for name, value in env.items():
        key = "%s[%r]" % (variable, name)
        if not isinstance(name, str) or not ENV_NAME.match(name):
            # the name is wrong, not the value: never shown (it may hold the credential the name was meant for)
            out.append(ClusterError(key, "<hidden>", where, "not an environment variable name: vllm.env is KEY=VALUE lines "
                                    "and docker takes the name up to the first '='",
                                    "use letters, digits and '_', not starting with a digit ([A-Za-z_][A-Za-z0-9_]*)"))
            continue
        upper = name.upper()
        if upper in CREDENTIAL_ENV or (CREDENTIAL_NAME.search(upper) and upper not in NOT_CREDENTIALS):
            known = upper in CREDENTIAL_ENV
            out.append(ClusterError(key, "<hidden>", where,
                                    "vLLM or huggingface_hub reads %s as a credential" % name if known
                                    else "the name says it holds a credential",
                                    _secret_fix(CREDENTIAL_ENV.get(upper), name)))
            continue
        if value is None:
            continue
        text = str(value)
        bad = [what for char, what in LINE_BREAKERS.items() if char in text]
        if bad:
            out.append(ClusterError(key, value, where, "holds %s, which would end the line in vllm.env and start "
                                    "another variable" % " and ".join(bad), "write the value on one line"))
        elif text != text.strip():
            out.append(ClusterError(key, value, where, "starts or ends with blanks, which docker's env-file reader "
                                    "strips", "remove the leading and trailing blanks"))
        elif redact.has_login(text):
            out.append(_login_problem(key, value, where, "vllm.env and the review files"))
    return out


def _login_problem(key: str, value: Any, where: str, lands: str) -> ClusterError:
    return ClusterError(key, value, where, "holds a login (user:password@host), which would land in %s" % lands,
                        "give the nodes that credential outside the plan (an instance role, a credentials file) or "
                        "through a secret variable (ansible-vault), and remove the user:password@ part")


def args_problems(variable: str, args: Mapping[Any, Any], where: str,
                  flags: Mapping[str, Optional[str]]) -> List[ClusterError]:
    out = []
    for flag in args:
        name = vllm_surface.flag_name(flag)
        if name in flags and args[flag] is not None:
            out.append(ClusterError("%s[%r]" % (variable, flag), "<hidden>", where,
                                    "--%s carries a credential: it would land on argv, in the review files and in "
                                    "the world-readable vllm.yaml" % name, _secret_fix(flags[name], "--" + name)))
        elif any(redact.has_login(text) for text in site_policy.strings(args[flag])):   # at any depth of a value
            shown = args[flag] if isinstance(args[flag], str) else "<hidden>"
            out.append(_login_problem("%s[%r]" % (variable, flag), shown, where,
                                      "argv, the review files and the world-readable vllm.yaml"))
    return out


def token_warnings(variable: str, values: Mapping[Any, Any], where: str) -> List[str]:
    return ["%s: %s[%r] looks like a token (%s...); plain variables land in the review files and on the node, "
            "secrets belong in vllm_hf_token or vllm_api_key (ansible-vault)" % (where, variable, name, str(v)[:3])
            for name, v in values.items() if isinstance(v, str) and TOKEN_VALUE.match(v.strip())]


def path_problem(value: Any) -> Optional[str]:
    """Why a host path cannot be a docker volume's source, else None. Only the empty or missing path is left
    to judge here: cluster._check_types has already held every other value to the boundary's volume format."""
    if not isinstance(value, str) or value == "":
        return "a host path mounted into the container: not an absolute path (docker would take a relative one " \
               "as a named volume)"
    return None


def volume_problems(settings: Mapping[str, Any], where: str) -> List[ClusterError]:
    """Each host path on its own (the boundary's volume format), then against each other: the weights cache is
    mounted read-only and kept by teardown, the compile cache read-write and removed, so neither may hold the other."""
    errors = []
    for var in VOLUME_VARS:
        if var in OPTIONAL_VOLUME_VARS and settings[var] == "":
            continue
        problem = path_problem(settings[var])
        if problem:
            fix = "set an absolute, normalized directory of its own without ':' or line breaks, e.g. %s" \
                % CLUSTER_DEFAULTS[var]
            if var in OPTIONAL_VOLUME_VARS:
                fix += ", or '' to mount none"
            errors.append(ClusterError(var, settings[var], where, problem, fix))
    model, compiled = settings["vllm_model_cache_dir"], settings["vllm_compile_cache_dir"]
    if not errors and compiled and overlap(model, compiled):
        errors.append(ClusterError(
            "vllm_compile_cache_dir", compiled, where,
            "overlaps vllm_model_cache_dir %s: the weights are mounted read-only and kept by teardown, the compile "
            "cache read-write and removed by it" % model,
            "give the compile cache a directory of its own beside the weights, e.g. %s"
            % CLUSTER_DEFAULTS["vllm_compile_cache_dir"]))
    return errors


def overlap(a: str, b: str) -> bool:
    """One directory is the other or holds it."""
    return a == b or a.startswith(b.rstrip("/") + "/") or b.startswith(a.rstrip("/") + "/")


def check(cluster: Cluster) -> List[str]:
    """Every problem of the cluster's plain variables in one ClusterErrors; returns the warnings."""
    where = "cluster %s" % cluster.name
    flags = credential_flags(cluster.surface.options)
    s = cluster.settings
    errors = env_problems("vllm_site_env", s["vllm_site_env"] or {}, where)
    errors += args_problems("vllm_site_args", s["vllm_site_args"] or {}, where, flags)
    warnings = token_warnings("vllm_site_env", s["vllm_site_env"] or {}, where)
    warnings += token_warnings("vllm_site_args", s["vllm_site_args"] or {}, where)
    # a cluster's group_vars repeat on every host: one line per problem, naming its hosts
    found: Dict[Tuple[str, str], Tuple[ClusterError, List[str]]] = {}
    for node in cluster.nodes:
        hwhere = "host %s" % node.host
        for problem in env_problems("vllm_env", node.env, hwhere) + args_problems("vllm_args", node.args, hwhere, flags):
            found.setdefault((problem.variable, problem.problem), (problem, []))[1].append(node.host)
        for line in token_warnings("vllm_env", node.env, hwhere) + token_warnings("vllm_args", node.args, hwhere):
            if line.split(": ", 1)[1] not in {w.split(": ", 1)[1] for w in warnings}:
                warnings.append(line)
    for problem, hosts in found.values():
        errors.append(ClusterError(problem.variable, problem.value, shown_hosts(hosts), problem.problem, problem.fix))
    errors += volume_problems(s, where)
    raise_all(errors)
    return warnings
