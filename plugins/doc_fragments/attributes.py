# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The attributes every module of the collection documents, written once.

A module extends the base fragment (what each attribute means) with one check-mode variant
and one platform variant, for example:

  extends_documentation_fragment:
    - inferops.vllm.attributes
    - inferops.vllm.attributes.read_only
    - inferops.vllm.attributes.posix

A module may still add its own C(details) to an attribute in its C(attributes) section
(what it reads, where it runs); the module's keys win over the fragment's."""

from __future__ import annotations


class ModuleDocFragment:

    # What each attribute means; every module extends this one.
    DOCUMENTATION = r"""
options: {}
attributes:
  check_mode:
    description: Can run in check mode and report what it would change without changing the target.
  diff_mode:
    description: Returns details on what has changed (or would change in check mode) when in diff mode.
  platform:
    description: Target OS families that can be operated against.
"""

    # Reads only (a node's state, an endpoint) or computes on the controller: nothing to predict or diff.
    READ_ONLY = r"""
options: {}
attributes:
  check_mode:
    support: full
    details: Changes nothing; the same result is returned in check mode.
  diff_mode:
    support: N/A
    details: Nothing changes, so there is no diff.
"""

    # Changes something that is not a file (a registry's contents): check mode reports what it would do.
    CHECK_MODE = r"""
options: {}
attributes:
  check_mode:
    support: full
    details: Reports what it would change, without changing it.
  diff_mode:
    support: none
    details: No files are managed, so there is no diff.
"""

    # The module's run is its action (requests against a live server): check mode skips it.
    NO_CHECK_MODE = r"""
options: {}
attributes:
  check_mode:
    support: none
    details: Running it is the action; in check mode the task is skipped.
  diff_mode:
    support: N/A
    details: Nothing on the target changes, so there is no diff.
"""

    # Runs on Linux (POSIX) hosts.
    POSIX = r"""
options: {}
attributes:
  platform:
    support: full
    platforms: posix
"""

    # Runs on the controller only (an action plugin); no host is contacted.
    CONTROLLER = r"""
options: {}
attributes:
  platform:
    support: full
    platforms: all
    details: Runs on the controller only; no host is contacted.
"""
