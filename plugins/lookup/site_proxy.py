# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lookup for the host's site proxy: inferops_proxy with the site registry mirror in no_proxy, rendered once."""

from __future__ import annotations

DOCUMENTATION = r"""
name: site_proxy
short_description: The host's site proxy (inferops_proxy) checked and rendered, with the site registry mirror direct
description:
  - The one place that says which variables make up a host's proxy settings. Reads the host's C(inferops_proxy)
    (unset is no proxy) and C(vllm_image_mirror) (unset is none) and returns what the
    P(inferops.vllm.proxy_settings#filter) filter makes of them, the mirror's host added to C(no_proxy).
  - The C(inferops.vllm.host_proxy) role writes these settings to apt, dnf and dockerd; the roles' own downloads
    (C(os_packages), C(vllm_image), C(vllm_router)) take C(environment) from here, also in plays that do not run
    C(host_proxy) (C(upgrade.yml)).
  - Without terms, the whole settings dict; with terms, the named keys of it.
options:
  _terms:
    description: Keys of the settings to return; none returns the whole dict.
    type: list
    elements: str
    required: false
    choices: [enabled, secret, shown, no_proxy, environment, apt_conf, dnf_proxy, docker_env, docker_dropin, problems]
seealso:
  - plugin: inferops.vllm.proxy_settings
    plugin_type: filter
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: Download through the site's proxy
  ansible.builtin.get_url:
    url: https://example.com/key.gpg
    dest: /usr/share/keyrings/example.gpg
    mode: "0644"
  environment: "{{ lookup('inferops.vllm.site_proxy', 'environment') }}"
"""

RETURN = r"""
_raw:
  description: The settings dict (see P(inferops.vllm.proxy_settings#filter)), or the value of each key asked for.
  type: list
  elements: raw
"""

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.inferops.vllm.plugins.module_utils.controller import proxy


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        variables = variables or {}
        # as "inferops_proxy | default({})" and "vllm_image_mirror | default('')" in a template
        value = self._templar.template(variables.get("inferops_proxy", {}))
        mirror = self._templar.template(variables.get("vllm_image_mirror", ""))
        settings = proxy.settings(value, [mirror])
        if not terms:
            return [settings]
        try:
            return [settings[str(term)] for term in terms]
        except KeyError as err:
            raise AnsibleLookupError("site_proxy has no key %s; it has %s" % (err.args[0], ", ".join(sorted(settings))))
