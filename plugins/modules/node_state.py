#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: node_state
short_description: Read what a node already has (packages, services, files, images, containers) in one call
description:
  - The roles read a node's state once and run a change task only where it differs from the wanted state,
    so a converged node costs one round trip per role instead of one per resource.
  - In a run where M(inferops.vllm.node_read) read the node first, a task with the same arguments is answered from
    that read on the controller, without the node, while the node was as wanted in all of it (the result then has
    C(node_read=true)).
  - Read-only. A missing package, file, image or container, or a missing C(docker) or C(systemctl), is
    reported as absent, not as an error.
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
options:
  packages:
    description:
      - Package names to look up with C(dpkg-query) (or C(rpm) where there is no dpkg).
      - With C(rpm), a name may also be given as name-version-release(.arch), as a running kernel's headers are.
    type: list
    elements: str
    default: []
  services:
    description: systemd units to look up.
    type: list
    elements: str
    default: []
  files:
    description: Paths whose existence, mode and SHA-1 checksum to report (the checksum C(ansible.builtin.copy) compares).
    type: list
    elements: path
    default: []
  read:
    description: Small text files to report like O(files) and also return whole. Never name a file holding a secret.
    type: list
    elements: path
    default: []
  images:
    description: Docker image references to inspect.
    type: list
    elements: str
    default: []
  containers:
    description: Docker container names to inspect.
    type: list
    elements: str
    default: []
  role:
    description:
      - A role whose wanted state the collection builds (V(host_proxy), V(nvidia_driver), V(rocm),
        V(container_runtime), V(vllm_serve), V(vllm_watchdog)) on the controller
        from O(settings), before the node is read (the action plugin of the same name). The steps of O(wanted), if
        given too, are added to it.
    type: str
  settings:
    description:
      - The role's settings for O(role), plain data (its tunables, OS data and what the role decided). An unknown,
        missing or mistyped setting fails the task, naming it.
    type: dict
  wanted:
    description:
      - The wanted state as data, by step (a task file or task of the role that would bring it about). The module
        reads what the steps name, on top of the lists above, and returns per step whether the node differs, and why.
        A step given as null is left out of RV(steps); an empty step never differs.
      - Each step is a dict with any of the keys below; a key left out or null is not judged.
      - >-
        C(packages), by package name, a dict of C(present) (default true; false, not installed; null, only its hold
        is judged, where it is installed), C(version) (a prefix the installed version must start with, as
        C(apt install name=<version>*) matches), C(version_of) (another package, whose installed upstream version is
        the prefix, for add-ons that must match the driver exactly) and C(hold) (true, on hold where installed;
        versionlocked on rpm nodes, see RV(packages)).
      - >-
        C(files), by path, a dict of C(exists), C(isdir), C(mode), C(content) (the exact text, compared by SHA-1 as
        M(ansible.builtin.copy) does), C(checksum) (its SHA-1; use it, not C(content), for a file that holds a secret,
        so that the secret is not among the module's arguments), C(lines) (each a whole line of the file),
        C(last_line_matching) (a dict of C(regexp) and C(line); the last line the regexp finds is the line, what
        M(ansible.builtin.lineinfile) leaves) and C(json_subset) (the file is JSON holding these keys and values,
        recursively into objects; what a recursive merge of them would not change).
      - C(services), by unit, a dict of C(active) and C(enabled).
      - >-
        C(modules), by DNF module, the stream that must be enabled (read from C(/etc/dnf/modules.d/*.module), what
        C(dnf module enable) or C(dnf module install) records; dnf is not run).
      - >-
        C(repos), by DNF repository id, a dict of C(enabled) (read from C(/etc/yum.repos.d/*.repo); a repository
        that no file defines differs where it must be enabled).
      - >-
        C(groups), by group, the members it must list (read from C(/etc/group)); C(users), names that must exist
        (read from C(/etc/passwd)).
      - >-
        C(containers), by name, a dict of C(running), C(labels) (label values the container must have),
        C(started_after) (files the container reads at its start: one modified after the container's last start
        differs, as a run that stopped between writing it and restarting the container leaves it) and
        C(env_file) (the file the container was created from: each of its KEY=VALUE lines must be in the
        container's environment; judged on the node, and only the names are given in the reason).
      - C(always), a reason to run the step without judging it (what the data cannot express).
      - A file's text, the DNF modules and the repositories read only to judge a step are not returned.
      - Any other key, of a step or of an entry (a typo such as C(mod) for C(mode)), fails the module before it
        reads anything, naming the step, the entry and the keys it takes, since a key no judge reads would pass
        silently.
    type: dict
    default: {}
extends_documentation_fragment:
  - inferops.vllm.attributes
  - inferops.vllm.attributes.read_only
  - inferops.vllm.attributes.posix
attributes:
  platform:
    details: Linux nodes (dpkg or rpm, systemd, the docker CLI where there is one).
"""

EXAMPLES = r"""
- name: Read the engine's state
  inferops.vllm.node_state:
    packages: [docker.io]
    services: [docker]
    read: [/etc/docker/daemon.json]
  register: engine

- name: Install the engine only where it is missing
  ansible.builtin.apt:
    name: docker.io
  when: engine.packages['docker.io'] is none

- name: Read the engine against its wanted state
  inferops.vllm.node_state:
    wanted:
      engine:
        packages: {docker.io: {hold: true}}
        services: {docker: {active: true, enabled: true}}
      daemon_json:
        files: {/etc/docker/daemon.json: {mode: "0644", json_subset: {live-restore: true}}}
  register: engine_state

- name: Say why the engine step runs
  ansible.builtin.debug:
    msg: "{{ engine_state.steps.engine.why }}"
    verbosity: 1
  when: engine_state.steps.engine.differs
"""

RETURN = r"""
packages:
  description:
    - Per name, C(version), C(upstream) (the version without its Debian or RPM release, C(580.95.05) of
      C(580.95.05-1)) and C(hold) of the installed package, or null when it is not installed.
    - C(hold) is C(apt-mark hold) on dpkg nodes; on rpm nodes, an entry of dnf's versionlock list
      (C(/etc/dnf/plugins/versionlock.list), or the C(locklist) its C(versionlock.conf) names) locks the package.
  returned: always
  type: dict
  sample: {docker.io: {version: "20.10.24+dfsg1-1+b3", upstream: "20.10.24+dfsg1", hold: false}, nvidia-open: null}
services:
  description: Per unit, C(installed), C(active) and C(enabled).
  returned: always
  type: dict
  sample: {docker: {installed: true, active: true, enabled: true}}
files:
  description: Per path (O(files) and O(read)), C(exists), C(isdir), C(mode) (octal string), C(mtime) (epoch seconds),
    C(checksum) (SHA-1, regular files) and, for O(read), C(content).
  returned: always
  type: dict
  sample: {/etc/docker/daemon.json: {exists: true, isdir: false, mode: "0644", mtime: 1796198976.112,
                                     checksum: 5f36b2ea290645ee34d943220a14b54ee5ea5be5, content: "{}\n"}}
images:
  description: Per reference, C(present), C(id) and C(repo_digests).
  returned: always
  type: dict
  sample:
    "vllm/vllm-openai@sha256:0000000000000000000000000000000000000000000000000000000000000000":
      present: true
      id: "sha256:1111111111111111111111111111111111111111111111111111111111111111"
      repo_digests: ["vllm/vllm-openai@sha256:0000000000000000000000000000000000000000000000000000000000000000"]
containers:
  description: >-
    Per name, C(exists), C(running), C(status), C(image), C(labels), C(started_at) (epoch seconds of the last
    start, by anyone), C(restart_count) (restarts by docker's restart policy) and C(exit_code).
  returned: always
  type: dict
  sample:
    vllm:
      exists: true
      running: true
      status: running
      image: "sha256:1111111111111111111111111111111111111111111111111111111111111111"
      labels: {inferops.vllm.launch: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08}
      started_at: 1796065269.123
      restart_count: 0
      exit_code: 0
steps:
  description: >-
    Per step of O(wanted), C(differs) (the node differs from the step's wanted state), C(why) (what differs, in
    short human strings; never a file's content) and, for a step with packages, C(todo), what its package tasks
    must do - C(install),
    the packages not installed or at a version their pin does not match, and C(hold), the packages wanted on hold
    that are installed and not on hold, or that the step installs. For a step with files judged by C(json_subset),
    C(todo.json) holds per file the text to write - the file's JSON with those keys merged in, every other key
    kept (C(to_nice_json(indent=2)) with a final newline) - or an empty string where the file is not JSON.
  returned: always
  type: dict
  sample:
    install: {differs: true, why: ["nvidia-open: not on hold", "/etc/apt/preferences.d/00-inferops-nvidia-driver: content differs"],
              todo: {install: [], hold: [nvidia-open]}}
    persistenced: {differs: false, why: [], todo: {install: [], hold: []}}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.vllm.plugins.module_utils.node import calls


def main():
    module = AnsibleModule(argument_spec=calls.SPECS["node_state"], supports_check_mode=True)
    try:
        result = calls.node_state_read(
            module.params, lambda argv: module.run_command(argv, environ_update={"LC_ALL": "C"}), module.get_bin_path)
    except calls.Refused as refused:
        module.fail_json(msg=str(refused), **refused.result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
