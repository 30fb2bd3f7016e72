# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verdict line of roles/vllm_serve/files/check_launch.py, read from the
check container's output (vLLM may log before it)."""

from __future__ import annotations

import json
from typing import Any, Dict


def result(output: str) -> Dict[str, Any]:
    for line in reversed(output.splitlines()):
        line = line.strip()
        if line.startswith("{") and '"checked"' in line:
            try:
                verdict = json.loads(line)
            except ValueError:
                continue
            verdict.setdefault("flags", [])
            return verdict
    tail = output.strip().splitlines()[-3:]
    return {"checked": False, "ok": True, "version": None, "flags": [],
            "error": "the check printed no verdict: %s" % (" / ".join(tail) or "no output")}
