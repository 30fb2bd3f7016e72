# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Block-style YAML for the generated files (mappings, lists, strings, numbers, booleans), without PyYAML:
module_utils import only the standard library. A string is written plain when YAML reads it back as the same
string, else single-quoted, or as a JSON string (valid YAML double-quoted) when it holds control characters. Controller-only, no Ansible imports."""

from __future__ import annotations

import json
import re
from typing import Any, List, Mapping

_PLAIN = re.compile(r"\A[A-Za-z_/][A-Za-z0-9_./@+-]*(?: [A-Za-z0-9_./@+()'-]+)*\Z")
_RESERVED = re.compile(r"\A(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|"
                       r"null|Null|NULL|~)\Z")


def scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    text = str(value)
    if _PLAIN.match(text) and not _RESERVED.match(text):
        return text
    if text.isprintable():
        return "'%s'" % text.replace("'", "''")   # single-quoted: PromQL's double quotes stay as written
    return json.dumps(text, ensure_ascii=False)


def _lines(value: Any, indent: int) -> List[str]:
    pad = " " * indent
    if isinstance(value, Mapping):
        if not value:
            return [pad + "{}"]
        out = []
        for key, item in value.items():
            head = "%s%s:" % (pad, scalar(key))
            if isinstance(item, (Mapping, list, tuple)) and item:
                out.append(head)
                out += _lines(item, indent + 2)
            else:
                out.append("%s %s" % (head, _inline(item)))
        return out
    if isinstance(value, (list, tuple)):
        if not value:
            return [pad + "[]"]
        out = []
        for item in value:
            if isinstance(item, (Mapping, list, tuple)) and item:
                nested = _lines(item, indent + 2)
                out.append("%s- %s" % (pad, nested[0].lstrip()))
                out += nested[1:]
            else:
                out.append("%s- %s" % (pad, _inline(item)))
        return out
    return [pad + scalar(value)]


def _inline(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{}"
    if isinstance(value, (list, tuple)):
        return "[]"
    return scalar(value)


def dump(value: Any) -> str:
    return "\n".join(_lines(value, 0)) + "\n"
