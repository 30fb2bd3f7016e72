# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter for the vllm_rollout role: refuse a rollout that stops clusters no router fronts, unless accepted."""

from __future__ import annotations

from ansible_collections.inferops.vllm.plugins.module_utils.controller import rollout

DOCUMENTATION = r"""
name: rollout_downtime
short_description: Why a rolling upgrade or restart may not start, for clusters no router fronts
description:
  - A rollout drains each cluster from the routers before it moves it, so the routers' other clusters keep serving.
    A cluster that no router fronts simply stops serving while it moves.
  - Returns one line (the variable, the value, the clusters, what happens and the fix) when a cluster of the rollout
    has no router in front of it and C(vllm_rollout_allow_downtime) is not true, or when that variable is not a
    boolean; otherwise an empty list.
  - A router fronts the clusters of C(vllm_router_workers) (by endpoint) when that is set, else those named in
    C(vllm_router_clusters), else every cluster (the vllm_router role's worker list).
options:
  _input:
    description: The C(vllm_launch.cluster) summaries of the hosts of the rollout (one per node; duplicates are fine).
    type: list
    elements: dict
    required: true
  routers:
    description: The variables of each router host of the rollout (C(vllm_router_workers), C(vllm_router_clusters)).
    type: list
    elements: dict
    default: []
  allow:
    description: The value of C(vllm_rollout_allow_downtime) (unset is false).
    type: raw
  action:
    description: C(upgrade) or C(restart), for the message.
    type: str
    default: upgrade
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: Refuse downtime nobody accepted
  ansible.builtin.fail:
    msg: "{{ problems | join(' ') }}"
  when: problems | length > 0
  vars:
    problems: >-
      {{ ansible_play_hosts | map('extract', hostvars, ['vllm_launch', 'cluster']) | list
         | inferops.vllm.rollout_downtime(groups['vllm_routers'] | default([]) | map('extract', hostvars) | list,
                                          vllm_rollout_allow_downtime | default(false)) }}
"""

RETURN = r"""
_value:
  description: At most one line; empty when the rollout may start.
  type: list
  elements: str
  sample:
    - >-
      vllm_rollout_allow_downtime=False (clusters k25, k3): no router fronts these clusters, so an upgrade stops each
      of them while it moves (its clients get errors until it serves again). Fix: add a vllm_routers group in front
      of the clusters (inferops.vllm.vllm_router), or set vllm_rollout_allow_downtime: true to accept the downtime
"""


def rollout_downtime(clusters, routers=None, allow=None, action="upgrade"):
    # only the two settings that make a router's worker list: nothing else of the router host is templated
    settings = [{name: (router.get(name) if hasattr(router, "get") else None) for name in rollout.ROUTER_SETTINGS}
                for router in routers or []]
    return rollout.downtime_problems([dict(c) for c in clusters or [] if hasattr(c, "keys")], settings, allow,
                                     str(action))


class FilterModule:
    def filters(self):
        return {"rollout_downtime": rollout_downtime}
