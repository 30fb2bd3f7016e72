# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The site's forward proxy (`inferops_proxy`): checked, and rendered into what each consumer reads.

One dict in the inventory, `{http, https, no_proxy}`, becomes apt's configuration, dnf's `proxy=`,
dockerd's environment (a systemd drop-in naming a 0600 environment file) and the environment of the
roles' own downloads. A proxy URL may carry a password: messages show it as `***`, and the callers
write files that hold one with a restricted mode. No Ansible imports."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Tuple
from urllib.parse import urlsplit

VARIABLE = "inferops_proxy"
KEYS = ("http", "https", "no_proxy")
# Always direct: the node itself (the local registry, dockerd's own API, health checks).
ALWAYS_DIRECT = ("127.0.0.1", "localhost", "::1")
DOCKER_DROPIN = "/etc/systemd/system/docker.service.d/http-proxy.conf"
DOCKER_ENV_FILE = "/etc/docker/http-proxy.env"
APT_FILE = "/etc/apt/apt.conf.d/90inferops-proxy"
HEADER = "Managed by inferops.vllm (inferops_proxy)"
_EXAMPLE = "{http: 'http://proxy.example.com:3128', https: 'http://proxy.example.com:3128', no_proxy: ['.example.com']}"
_BAD_CHARS = re.compile(r"[\s\"'\\;,]")
_HOST = re.compile(r"\A(\*?\.)?[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?\Z")


class ProxyError(ValueError):
    """A wrong `inferops_proxy`: the message names the variable, the value (password hidden) and the fix."""


@dataclass(frozen=True)
class Proxy:
    http: str = ""
    https: str = ""
    no_proxy: Tuple[str, ...] = field(default_factory=tuple)

    @property
    def enabled(self) -> bool:
        return bool(self.http or self.https)

    @property
    def secret(self) -> bool:
        """A URL carries credentials: the files that hold it must not be world-readable."""
        return any(urlsplit(url).username is not None for url in (self.http, self.https) if url)


def redact(url: str) -> str:
    """The URL with its password (or lone user token) shown as ***."""
    parts = urlsplit(url)
    if parts.username is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    user = parts.username if parts.password is not None else "***"
    shown = "%s:***" % user if parts.password is not None else user
    return parts._replace(netloc="%s@%s" % (shown, host)).geturl()


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return repr(redact(value))
    if isinstance(value, dict):
        return "{%s}" % ", ".join("%s: %s" % (k, _shown(v)) for k, v in value.items())
    return repr(value)


def _url_problem(key: str, url: Any) -> Optional[str]:
    where = "%s.%s=%s" % (VARIABLE, key, _shown(url))
    if not isinstance(url, str):
        return "%s is not a string. Fix: set it to a URL such as http://proxy.example.com:3128." % where
    if _BAD_CHARS.search(url):
        return ("%s holds a space, quote, comma, semicolon or backslash. Fix: one URL, with special characters of a "
                "password percent-encoded (%%40 for @)." % where)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return ("%s has scheme %r; apt, dnf and dockerd take http:// or https:// proxies. Fix: "
                "http://proxy.example.com:3128." % (where, parts.scheme or "none"))
    try:
        port = parts.port
    except ValueError:
        return "%s has a port that is not a number from 1 to 65535. Fix: host:port, e.g. proxy.example.com:3128." % where
    if not parts.hostname:
        return "%s names no host. Fix: http://proxy.example.com:3128." % where
    if port == 0:
        return "%s has port 0. Fix: the proxy's port, e.g. 3128." % where
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        return ("%s has a path, query or fragment; a proxy is scheme://[user:password@]host[:port]. Fix: drop %r."
                % (where, url[len("%s://%s" % (parts.scheme, parts.netloc)):]))
    return None


def _no_proxy_entries(value: Any) -> Tuple[List[str], Optional[str]]:
    where = "%s.no_proxy=%s" % (VARIABLE, _shown(value))
    if value is None:
        return [], None
    if isinstance(value, str):
        items = [v.strip() for v in value.split(",")]
    elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        items = [v.strip() for v in value]
    else:
        return [], "%s is not a list of host names. Fix: no_proxy: ['.example.com', '10.0.0.0/8']." % where
    entries = []
    for item in items:
        if not item:
            continue
        if not _is_host_entry(item):
            return [], ("%s has %r, which is not a host name, domain (.example.com), IP address or CIDR range. "
                        "Fix: remove it or write it as one of those." % (where, item))
        entries.append(item)
    return entries, None


def _is_host_entry(item: str) -> bool:
    host, _sep, port = item.rpartition(":") if item.count(":") == 1 else (item, "", "")
    if port and not port.isdigit():
        return False
    try:
        ipaddress.ip_network(host.strip("[]"), strict=False)
        return True
    except ValueError:
        return bool(_HOST.match(host)) or host == "*"


def parse(value: Any) -> Proxy:
    """`inferops_proxy` as set in the inventory; None or {} (or all values empty) is no proxy."""
    if value is None or value == {} or value == "":
        return Proxy()
    if not isinstance(value, dict):
        raise ProxyError("%s=%s is not a dict. Fix: %s: %s, or leave it unset for no proxy."
                         % (VARIABLE, _shown(value), VARIABLE, _EXAMPLE))
    unknown = sorted(set(value) - set(KEYS))
    if unknown:
        raise ProxyError("%s has unknown key(s) %s; it takes http, https and no_proxy. Fix: %s: %s."
                         % (VARIABLE, ", ".join(map(str, unknown)), VARIABLE, _EXAMPLE))
    urls = {}
    for key in ("http", "https"):
        url = value.get(key)
        if url in (None, ""):
            urls[key] = ""
            continue
        problem = _url_problem(key, url)
        if problem:
            raise ProxyError(problem)
        urls[key] = url.rstrip("/")
    entries, problem = _no_proxy_entries(value.get("no_proxy"))
    if problem:
        raise ProxyError(problem)
    if entries and not (urls["http"] or urls["https"]):
        raise ProxyError("%s sets no_proxy but neither http nor https. Fix: set the proxy URL(s), or remove no_proxy."
                         % VARIABLE)
    return Proxy(http=urls["http"], https=urls["https"], no_proxy=tuple(entries))


def problems(value: Any) -> List[str]:
    """The one problem with `inferops_proxy`, as a list (empty when it is fine), for an assert."""
    try:
        parse(value)
    except ProxyError as exc:
        return [str(exc)]
    return []


def registry_host(mirror: str) -> str:
    """The host of a registry mirror `host[:port]` (or a URL), for no_proxy."""
    mirror = (mirror or "").strip()
    if "://" in mirror:
        return urlsplit(mirror).hostname or ""
    host = mirror.split("/", 1)[0]
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def no_proxy(proxy: Proxy, extra_hosts: Iterable[str] = ()) -> List[str]:
    """What goes direct: the node itself, the site registry mirror, then what the user listed; no duplicates."""
    out: List[str] = []
    for entry in list(ALWAYS_DIRECT) + [registry_host(h) for h in extra_hosts] + list(proxy.no_proxy):
        if entry and entry not in out:
            out.append(entry)
    return out


def environment(proxy: Proxy, extra_hosts: Iterable[str] = ()) -> Dict[str, str]:
    """The environment of a download (get_url) on a node: both spellings, as curl and Python read them."""
    if not proxy.enabled:
        return {}
    env = {}
    if proxy.http:
        env["http_proxy"] = env["HTTP_PROXY"] = proxy.http
    if proxy.https:
        env["https_proxy"] = env["HTTPS_PROXY"] = proxy.https
    env["no_proxy"] = env["NO_PROXY"] = ",".join(no_proxy(proxy, extra_hosts))
    return env


def apt_conf(proxy: Proxy, extra_hosts: Iterable[str] = ()) -> str:
    """/etc/apt/apt.conf.d/90inferops-proxy; hosts of no_proxy that apt can name (exact hosts, not domains or
    ranges) go DIRECT. Empty when there is no proxy (the file is then removed)."""
    if not proxy.enabled:
        return ""
    lines = ["// %s" % HEADER]
    for scheme in ("http", "https"):
        url = getattr(proxy, scheme)
        if url:
            lines.append('Acquire::%s::Proxy "%s";' % (scheme, url))
    for host in no_proxy(proxy, extra_hosts):
        if host.startswith((".", "*")) or "/" in host or ":" in host:
            continue
        for scheme in ("http", "https"):
            if getattr(proxy, scheme):
                lines.append('Acquire::%s::Proxy::%s "DIRECT";' % (scheme, host))
    return "\n".join(lines) + "\n"


def dnf_proxy(proxy: Proxy) -> str:
    """dnf's one `proxy=` (it has no per-scheme setting): the https proxy where set (repositories are https),
    else the http one; "" removes the setting."""
    return proxy.https or proxy.http


def docker_env(proxy: Proxy, extra_hosts: Iterable[str] = ()) -> str:
    """dockerd's environment file (0600; systemd reads it as root and `systemctl show` prints only its path).
    Empty when there is no proxy."""
    if not proxy.enabled:
        return ""
    lines = ["# %s: dockerd's proxy for pulls and registry logins" % HEADER]
    if proxy.http:
        lines.append("HTTP_PROXY=%s" % proxy.http)
    if proxy.https:
        lines.append("HTTPS_PROXY=%s" % proxy.https)
    lines.append("NO_PROXY=%s" % ",".join(no_proxy(proxy, extra_hosts)))
    return "\n".join(lines) + "\n"


def docker_dropin(proxy: Proxy) -> str:
    """The systemd drop-in for docker.service; it names the environment file, so no proxy URL (nor a password)
    shows in the unit's Environment= to local users. Empty when there is no proxy."""
    if not proxy.enabled:
        return ""
    return "# %s\n[Service]\nEnvironmentFile=%s\n" % (HEADER, DOCKER_ENV_FILE)


def render(value: Any, extra_hosts: Iterable[str] = ()) -> Dict[str, Any]:
    """Everything the host_proxy role writes, from the inventory value; raises ProxyError on a wrong one."""
    proxy = parse(value)
    extra = [h for h in extra_hosts if h]
    return {
        "enabled": proxy.enabled,
        "secret": proxy.secret,
        "shown": {"http": redact(proxy.http), "https": redact(proxy.https)},
        "no_proxy": no_proxy(proxy, extra) if proxy.enabled else [],
        "environment": environment(proxy, extra),
        "apt_conf": apt_conf(proxy, extra),
        "dnf_proxy": dnf_proxy(proxy),
        "docker_env": docker_env(proxy, extra),
        "docker_dropin": docker_dropin(proxy),
    }


def settings(value: Any, extra_hosts: Iterable[str] = ()) -> Dict[str, Any]:
    """render() that never raises: a wrong value gives no proxy and its message in `problems`
    (the proxy_settings filter and the site_proxy lookup)."""
    extra = [str(h) for h in extra_hosts if h]
    try:
        out = render(value, extra)
        out["problems"] = []
    except ProxyError as exc:
        out = render({}, [])
        out["problems"] = [str(exc)]
    return out
