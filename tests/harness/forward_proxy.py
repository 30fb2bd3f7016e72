"""A small HTTP forward proxy for the Molecule scenario that sets inferops_proxy (hgx), and the
origin it forwards to. Test harness only, standard library only.

The stand-in vendor repository is served under a host name that DNS never resolves
(standin-repo.invalid): only this proxy knows where it is (--route), so a node reaches it only
through the proxy, and every request it forwards is logged for the test to read. It forwards
nowhere else: other hosts get 403 (the scenario's no_proxy sends the Debian mirror direct).

usage: forward_proxy.py proxy --listen 127.0.0.1:18128 --route standin-repo.invalid=127.0.0.1:18129 --log F --pidfile P
       forward_proxy.py origin --listen 127.0.0.1:18129 --directory DIR --pidfile P
"""
from __future__ import annotations

import argparse
import functools
import http.client
import http.server
import os
import sys
import threading
import time
import urllib.parse

HOP_HEADERS = {"connection", "proxy-connection", "keep-alive", "proxy-authorization", "te", "trailer",
               "transfer-encoding", "upgrade"}


class ProxyHandler(http.server.BaseHTTPRequestHandler):
    routes: dict = {}
    log_path = ""
    lock = threading.Lock()
    protocol_version = "HTTP/1.1"

    def record(self, status: int) -> None:
        with self.lock, open(self.log_path, "a", encoding="utf-8") as log:
            log.write("%s %s %s %d\n" % (time.strftime("%H:%M:%S"), self.command, self.path, status))

    def refuse(self, status: int, why: str) -> None:
        body = (why + "\n").encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.record(status)

    def forward(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        if url.scheme != "http" or not url.hostname:
            self.refuse(400, "a forward proxy takes absolute http:// URLs")
            return
        target = self.routes.get(url.hostname)
        if target is None:
            self.refuse(403, "this test proxy forwards only to %s" % ", ".join(sorted(self.routes)))
            return
        upstream = http.client.HTTPConnection(target, timeout=60)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_HEADERS}
        upstream.request(self.command, url.path + ("?" + url.query if url.query else ""), headers=headers)
        reply = upstream.getresponse()
        body = reply.read()
        self.send_response(reply.status, reply.reason)
        for key, value in reply.getheaders():
            if key.lower() not in HOP_HEADERS and key.lower() != "content-length":
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        upstream.close()
        self.record(reply.status)

    do_GET = forward
    do_HEAD = forward

    def do_CONNECT(self) -> None:   # noqa: N802 (http.server's naming)
        self.refuse(405, "no https through this test proxy")

    def log_message(self, format, *args) -> None:   # pylint: disable=redefined-builtin
        pass   # the request log above is the record


def address(text: str) -> tuple:
    host, _sep, port = text.rpartition(":")
    if not host.startswith("127."):
        raise argparse.ArgumentTypeError("%s: the test proxy listens and forwards on loopback only" % text)
    return host, int(port)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("mode", choices=["proxy", "origin"])
    parser.add_argument("--listen", type=address, required=True)
    parser.add_argument("--route", action="append", default=[], help="NAME=127.0.0.1:PORT")
    parser.add_argument("--directory", help="origin: the directory to serve")
    parser.add_argument("--log", default=os.devnull)
    parser.add_argument("--pidfile", required=True)
    parser.add_argument("--lifetime", type=int, default=3600, help="seconds before it stops by itself")
    args = parser.parse_args()
    if args.mode == "proxy":
        routes = {}
        for route in args.route:
            name, _sep, target = route.partition("=")
            routes[name] = "%s:%d" % address(target)
        handler = type("Handler", (ProxyHandler,), {"routes": routes, "log_path": args.log})
    else:
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=args.directory)
    server = http.server.ThreadingHTTPServer(args.listen, handler)
    with open(args.pidfile, "w", encoding="utf-8") as pidfile:
        pidfile.write("%d\n" % os.getpid())
    threading.Timer(args.lifetime, server.shutdown).start()
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
