# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secrets never echoed: what a refusal or warning may show of a value that holds, or may hold, a secret.

Two layers, so that no road to a line is missed: `shown` hides a value by what names it (the secret
variables, any name or key that says credential, any spelling of vLLM's key flag) when a refusal is made,
and `line` scrubs every finished line the plan prints or writes (URL user info, values that look like
tokens, a credential key's value). No Ansible imports."""

from __future__ import annotations

import re
from typing import Any, List

HIDDEN = "<hidden>"
# a name or key that says it holds a credential, in any spelling (api_key, --api-key, API-KEY, hf_token, MY_PASSWORD)
_CREDENTIAL = re.compile(r"(\A|[^a-z0-9])(api[-_]?key|access[-_]?key|private[-_]?key|secret|token|password|passwd|"
                         r"credentials?|auth)([^a-z0-9]|\Z)|[^a-z0-9]key\W*\Z", re.IGNORECASE)
# the switches whose names end like a credential but hold none
_NOT_CREDENTIAL = re.compile(r"disable[-_]implicit[-_]token|tokens?[-_]only|token[-_]ids|max[-_]tokens",
                             re.IGNORECASE)
# scheme://user:password@ or user:password@host (a registry written with its login)
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)?(?P<info>[^\s/@'\"\[\]]+:[^\s/@'\"\]]*)@(?=[^\s@]+)")
# values that look like a Hugging Face or OpenAI-style token
_TOKEN = re.compile(r"\b(hf_[A-Za-z0-9]{16,}|sk-[A-Za-z0-9_-]{16,})\b")
# name['key']=value or name[key]=value in a refusal, where the key says credential
_KEYED = re.compile(r"(\[['\"]?(?P<key>[^\]'\"]*)['\"]?\]=)(?P<value>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[^\s(]+)")


# a flag written with its value inside a key or a word: --api-key=s3cret, api_key=s3cret
_INLINE = re.compile(r"((?:--)?[A-Za-z0-9_-]*(?:key|token|secret|password|passwd)=)[^\s'\"\],)]+", re.IGNORECASE)


def credential_name(name: Any) -> bool:
    """Whether a variable, key, flag or env name says it holds a credential."""
    text = str(name)
    return bool(_CREDENTIAL.search(text)) and not _NOT_CREDENTIAL.search(text)


def shown(variable: str, value: Any) -> Any:
    """The value as a refusal may show it: hidden when its name says credential, user info removed from a URL."""
    if value is None:
        return None
    if credential_name(variable):
        return HIDDEN
    if isinstance(value, str):
        return scrub(value)
    return value


def scrub(text: str) -> str:
    """User info and token-like values removed from a text."""
    text = _USERINFO.sub(lambda m: (m.group("scheme") or "") + "***@", text)
    return _TOKEN.sub(HIDDEN, text)


def line(text: str) -> str:
    """A finished refusal or warning line with every secret-shaped value hidden."""
    def keyed(match: "re.Match[str]") -> str:
        return match.group(1) + repr(HIDDEN) if credential_name(match.group("key")) else match.group(0)

    def inline(match: "re.Match[str]") -> str:   # a key written with its value: ['--api-key=s3cret']
        return match.group(1) + HIDDEN if credential_name(match.group(1)) else match.group(0)
    return scrub(_INLINE.sub(inline, _KEYED.sub(keyed, text)))


def secrets_in(value: Any) -> List[str]:
    """The secret parts of a value: the password of any user info, any token-like word. A message built from the
    value (a fix that quotes part of it) is scrubbed of each."""
    if not isinstance(value, str):
        return []
    found = [m.group("info").split(":", 1)[1] for m in _USERINFO.finditer(value)]
    found += [m.group(1) for m in _TOKEN.finditer(value)]
    return [s for s in found if len(s) >= 4]


def has_login(text: str) -> bool:
    """Whether a text holds URL user info (user:password@host)."""
    return _USERINFO.search(text) is not None


def without(text: str, secrets: List[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, "***")
    return text
