# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter for the host_proxy role and the roles' downloads: inferops_proxy checked and rendered."""

from __future__ import annotations

from ansible_collections.inferops.vllm.plugins.module_utils.controller import proxy

DOCUMENTATION = r"""
name: proxy_settings
short_description: The site's forward proxy (inferops_proxy) checked and rendered for apt, dnf, dockerd and downloads
description:
  - Takes C(inferops_proxy) (a dict with C(http), C(https) and C(no_proxy); empty or null for no proxy) and returns
    what the C(inferops.vllm.host_proxy) role writes and the environment the roles' downloads use.
  - Never fails; a wrong value gives no proxy and one message in C(problems), which names C(inferops_proxy), the value
    (a password shown as C(***)) and the fix.
  - The collection's roles read a host's settings through the P(inferops.vllm.site_proxy#lookup) lookup, which
    feeds this filter C(inferops_proxy) and C(vllm_image_mirror).
options:
  _input:
    description: The value of C(inferops_proxy).
    type: raw
    required: true
  extra_no_proxy:
    description: Hosts that always go direct besides 127.0.0.1, localhost and ::1, such as the site registry mirror
      (C(host:port) is accepted; the port is dropped).
    type: list
    elements: str
    default: []
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: Download through the site's proxy
  ansible.builtin.get_url:
    url: https://example.com/key.gpg
    dest: /usr/share/keyrings/example.gpg
    mode: "0644"
  environment: "{{ (inferops_proxy | default({}) | inferops.vllm.proxy_settings).environment }}"
"""

RETURN = r"""
_value:
  description:
    - C(enabled), C(secret) (a URL carries credentials), C(shown) (the URLs with the password as C(***)),
      C(no_proxy) (list), C(environment) (dict; empty without a proxy), C(apt_conf), C(dnf_proxy), C(docker_env),
      C(docker_dropin) (strings; empty without a proxy), C(problems) (list of messages).
  type: dict
  sample: {enabled: true, secret: false, no_proxy: [127.0.0.1, localhost, "::1"], dnf_proxy: "http://proxy:3128",
           environment: {http_proxy: "http://proxy:3128", no_proxy: "127.0.0.1,localhost,::1"}, problems: []}
"""


def proxy_settings(value, extra_no_proxy=None):
    return proxy.settings(value, extra_no_proxy or [])


class FilterModule:
    def filters(self):
        return {"proxy_settings": proxy_settings}
