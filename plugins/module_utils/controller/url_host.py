# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An address as the host part of a URL: IPv6 in brackets (RFC 3986), anything else as it is.
Every URL the collection builds (endpoints, router workers, probes, the watchdog) goes through it."""

from __future__ import annotations

import ipaddress
from typing import Any


def is_ipv6(address: Any) -> bool:
    try:
        return isinstance(ipaddress.ip_address(str(address).strip("[]")), ipaddress.IPv6Address)
    except ValueError:
        return False


def url_host(address: Any) -> str:
    """'fd00::11' -> '[fd00::11]'; '10.0.0.1', 'node1' and an already bracketed address unchanged."""
    text = str(address)
    if is_ipv6(text) and not text.startswith("["):
        return "[%s]" % text
    return text


def base_url(address: Any, port: int, scheme: str = "http") -> str:
    return "%s://%s:%d" % (scheme, url_host(address), int(port))
