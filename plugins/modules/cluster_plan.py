# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# The work is done by the action plugin of the same name, on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
module: cluster_plan
short_description: Compile the vLLM launch of every cluster in the play, once, on the controller
description:
  - Reads the C(vllm_*) variables of every host in each cluster group named by a host of the play (or
    C(serial) batch), checks them against the fabric, hardware and backend rules and the pinned vLLM's
    accepted flags, and compiles every node's launch (vLLM flags, config file, environment, container
    options). Run it with C(run_once); then each host runs it with O(take) to get its own launch.
  - Runs on the controller only; no host is contacted. Bad input fails with a message that names the
    variable, the value and the fix.
  - The variables are documented in the C(inferops.vllm.cluster_plan) role.
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
options:
  output_dir:
    description: Controller directory where C(<cluster>/<host>.yaml), C(.json) and C(.sh) are written; empty writes none.
    type: str
    default: ""
  show:
    description: Return C(show), each node's summary line, C(docker run) line and config file, for display.
    type: bool
    default: false
  overrides:
    description:
      - Cluster-wide C(vllm_*) variables that replace the inventory's values for this compile only, checked like them
        (the capacity curve compiles each max-model-len with C(vllm_max_model_len) set here). The inventory is
        left as it is.
    type: dict
    default: {}
  take:
    description:
      - The C(stash) returned by the compiling task of this play; the host's launch is read from it and set
        as the C(vllm_launch) fact. Nothing is compiled.
    type: str
  check_inventory:
    description:
      - Only check that group C(vllm_clusters) holds hosts and that every group listed under it has some, naming
        the groups that do; nothing is compiled. The playbooks run it on C(localhost) first, since plays over an
        empty C(vllm_clusters) are skipped ("no hosts matched") and the run would exit 0.
    type: bool
    default: false
extends_documentation_fragment:
  - inferops.vllm.attributes
  - inferops.vllm.attributes.read_only
  - inferops.vllm.attributes.controller
notes:
  - Secrets such as C(vllm_api_key) are never returned; C(secret_env) names the variable that holds each one.
"""

EXAMPLES = r"""
- name: Compile every cluster's launch once
  inferops.vllm.cluster_plan:
  run_once: true
  register: plan

- name: Hand each node its launch
  inferops.vllm.cluster_plan:
    take: "{{ plan.stash }}"

- name: Show the head's flags
  ansible.builtin.debug:
    var: vllm_launch.argv
"""

RETURN = r"""
stash:
  description: Where this run keeps every node's launch (in Ansible's local temp dir, removed at exit); pass it to O(take).
  returned: when compiling
  type: str
show:
  description: With O(show), three lines per node (summary, C(docker run), config file); else empty.
  returned: when compiling
  type: list
  elements: str
ansible_facts:
  description: Facts set on the host.
  returned: with O(take)
  type: dict
  contains:
    vllm_launch:
      description:
        - This node's launch. Keys are C(cluster) (summary of the cluster), C(host), C(rank), C(role),
          C(serves_api), C(port), C(args) (flag to value), C(argv) (explicit C(vllm serve) arguments),
          C(command) and C(config_path) (how the container runs it), C(config_yaml), C(env), C(secret_env)
          and C(container) (C(community.docker.docker_container) options).
      type: dict
      returned: with O(take)
      sample:
        cluster: {name: k25_dep, profile: kimi_k25, gpu_model: H200, fabric: infiniband, strategy: dep,
                  nodes: [h200-01, h200-02], head: h200-01, endpoint: "http://10.30.0.11:8000"}
        host: h200-02
        rank: 1
        role: follower
        serves_api: false
        port: 8000
        args: {model: moonshotai/Kimi-K2.5, enable-expert-parallel: true, data-parallel-size: 16,
               data-parallel-size-local: 8, data-parallel-start-rank: 8, headless: true, all2all-backend: deepep_v2}
        argv: [moonshotai/Kimi-K2.5, --enable-expert-parallel, --data-parallel-size, "16", --data-parallel-size-local,
               "8", --data-parallel-start-rank, "8", --headless, --all2all-backend, deepep_v2]
        command: [--config, /etc/inferops-vllm/vllm.yaml]
        config_path: /etc/inferops-vllm/vllm.yaml
        config_yaml: "model: \"moonshotai/Kimi-K2.5\"\nenable-expert-parallel: true\n..."
        env: {NCCL_IB_HCA: "=mlx5_0,mlx5_1", NCCL_SOCKET_IFNAME: bond0, VLLM_HOST_IP: 10.30.0.12}
        secret_env: {VLLM_API_KEY: vllm_api_key}
        container: {network_mode: host, ipc_mode: host, privileged: false, devices: ["/dev/infiniband:/dev/infiniband"],
                    capabilities: [IPC_LOCK], ulimits: ["memlock:-1:-1"],
                    volumes: ["/var/lib/inferops-vllm/huggingface:/root/.cache/huggingface"]}
"""
