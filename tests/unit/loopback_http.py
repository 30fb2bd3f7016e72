"""A real HTTP server on loopback for the tests of code that asks one (a daemon's /health): it answers GET with
the next status of a list and records the paths asked."""
import contextlib
import http.server
import threading


@contextlib.contextmanager
def serving(status_of):
    """Yields (base URL, the paths asked); status_of(path) is the status to answer."""
    asked = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            asked.append(self.path)
            self.send_response(status_of(self.path))
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield "http://127.0.0.1:%d" % server.server_address[1], asked
    finally:
        server.shutdown()
        server.server_close()
