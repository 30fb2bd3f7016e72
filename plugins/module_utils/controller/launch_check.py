# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verdict line of roles/vllm_serve/files/check_launch.py, read from the
check container's output (vLLM may log before it)."""

from __future__ import annotations

import json
from typing import Any, Dict


def release_problem(found: Any, planned: str) -> str:
    """Why the image's vLLM (`found`, as the check read it: 0.32.0+cpu counts as 0.32.0) is not the release the launch
    was compiled for, or "" (also where either is unknown)."""
    release = str(found or "").split("+", maxsplit=1)[0]
    if not release or not planned or release == planned:
        return ""
    return ("carries vLLM %s, but the launch was compiled for vLLM %s (vllm_version): set vllm_version to %s and plan "
            "again, or pin an image of vLLM %s" % (release, planned, release, planned))


def result(output: str, planned: str = "") -> Dict[str, Any]:
    """The check's verdict; with `planned` (the launch's vllm_version), `release_problem` says whether the image's
    vLLM is that release ("" where it is, or cannot be told)."""
    verdict = _verdict(output)
    verdict["release_problem"] = release_problem(verdict.get("version"), planned) if verdict.get("checked") else ""
    return verdict


def _verdict(output: str) -> Dict[str, Any]:
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
