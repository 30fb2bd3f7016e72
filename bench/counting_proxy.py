"""A reverse proxy that counts: every response body byte it forwards from one upstream (the Hub
stand-in) is written to a log, one line per request. Benchmark harness only, standard library only.

The weights bench puts it between the store's Hub client (vllm_model_hf_endpoint) and olah, so the
bytes that crossed the "site boundary" are read from this log, not from the client's own account.
A redirect to the upstream is rewritten to point back here, so no byte goes around the count.
Each response is closed after its body (HTTP/1.0), so the count never depends on keep-alive framing.

log line (tab-separated): unix time, method, path, status, body bytes

usage: counting_proxy.py --listen 127.0.0.1:5091 --upstream http://127.0.0.1:5090 --log FILE
"""
import argparse
import http.client
import http.server
import threading
import time
import urllib.parse

HOP_HEADERS = {"connection", "proxy-connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade"}


class Counting(http.server.BaseHTTPRequestHandler):
    upstream = urllib.parse.urlsplit("http://127.0.0.1:5090")
    public = ""
    log_path = ""
    lock = threading.Lock()
    protocol_version = "HTTP/1.0"

    def log_message(self, *_args):
        pass

    def forward(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_HEADERS and k.lower() != "host"}
        headers["Host"] = self.upstream.netloc
        conn = http.client.HTTPConnection(self.upstream.hostname, self.upstream.port, timeout=120)
        sent = 0
        try:
            conn.request(self.command, self.path, body=body, headers=headers)
            resp = conn.getresponse()
            self.send_response_only(resp.status, resp.reason)
            for key, value in resp.getheaders():
                if key.lower() in HOP_HEADERS:
                    continue
                if key.lower() == "location" and value.startswith("%s://%s" % (self.upstream.scheme, self.upstream.netloc)):
                    value = self.public + value[len("%s://%s" % (self.upstream.scheme, self.upstream.netloc)):]
                self.send_header(key, value)
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD":
                while True:
                    chunk = resp.read(1 << 16)
                    if not chunk:
                        break
                    self.wfile.write(chunk)
                    sent += len(chunk)
            status = resp.status
        except OSError:
            status = 599
        finally:
            conn.close()
            with self.lock, open(self.log_path, "a", encoding="utf-8") as log:
                log.write("%.3f\t%s\t%s\t%d\t%d\n" % (time.time(), self.command, self.path, status, sent))

    do_GET = do_HEAD = do_POST = forward


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--listen", default="127.0.0.1:5091")
    parser.add_argument("--upstream", default="http://127.0.0.1:5090")
    parser.add_argument("--log", required=True)
    args = parser.parse_args()
    host, port = args.listen.rsplit(":", 1)
    Counting.upstream = urllib.parse.urlsplit(args.upstream)
    Counting.public = "http://%s" % args.listen
    Counting.log_path = args.log
    server = http.server.ThreadingHTTPServer((host, int(port)), Counting)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
