# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one error of the observability package: a bad setting, refused in one line before any file is written.
Controller-only, no Ansible imports."""

from __future__ import annotations

from typing import Any


class ObservabilityError(ValueError):
    """Names the variable, the value, the problem and the fix."""

    def __init__(self, variable: str, value: Any, problem: str, fix: str):
        self.variable, self.value, self.problem, self.fix = variable, value, problem, fix
        super().__init__("%s=%r: %s. Fix: %s" % (variable, value, problem, fix))
