"""Stand-in for the GPU exporters, which need a GPU: NVIDIA's dcgm-exporter 4.8 and AMD's
device-metrics-exporter 1.5. Stdlib only (it runs in the lean stand-in vLLM image).

It serves /metrics in the real exporter's exposition, for exactly the fields the role deploys:
- dcgm-exporter: the rows of the counters CSV (-f), labels gpu, UUID, pci_bus_id, device,
  modelName, Hostname (4.8.2 spelling), then the CSV's `label` rows and the field's attributes in
  sorted order, as render_metrics.go writes them; HELP/TYPE from the CSV. Listens on -a.
- amd-metrics-exporter (--amd, or this file named amd-metrics-exporter): GPUConfig.Fields of
  /etc/metrics/config.json (-amd-metrics-config), lowercased with MetricsFieldPrefix, the
  exporter's mandatory labels sorted as client_golang writes them, on every address at ServerPort.

The GPUs: the node's stand-in GPU profile (/etc/inferops-standin/gpu.json, which the stand-in
NVIDIA toolkit copies into a container only when it asks for the GPUs), or for AMD the render nodes
under /dev/dri (there only when the container got the devices); --gpus N/--model M for a run outside
a node. Without GPUs the DCGM stand-in exits as the real exporter does.

Scripted over time: each line of the script file (--script, $GPU_STANDIN_SCRIPT, default
/etc/inferops-standin/gpu-exporter.script, re-read on every scrape) is `<seconds> <gpu> <action>`,
seconds after the stand-in started:
    30 3 xid 79                              an XID (DCGM_FI_DEV_XID_ERRORS, DCGM_EXP_XID_ERRORS_COUNT)
    60 5 gone                                the GPU disappears from every series
    45 2 add DCGM_FI_DEV_ECC_DBE_VOL_TOTAL 1  a counter grows (AMD: add gpu_ecc_uncorrect_total 1)
    50 1 set DCGM_FI_DEV_GPU_TEMP 95         a value is set
"""
import json
import os
import re
import socket
import socketserver
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STARTED = time.time()
PROFILE = "/etc/inferops-standin/gpu.json"
DEFAULT_SCRIPT = "/etc/inferops-standin/gpu-exporter.script"
DCGM_CSV = "/etc/dcgm-exporter/default-counters.csv"
AMD_CONFIG = "/etc/metrics/config.json"
DRIVER = "580.95.05"
XID_WINDOW_MS = 300000
# device-metrics-exporter 1.5's mandatory GPU labels (an amd_gpu_package_power sample of v1.5.x)
AMD_LABELS = ("card_model", "container", "deployment_mode", "gpu_compute_partition_type", "gpu_id",
              "gpu_memory_partition_type", "gpu_partition_id", "hostname", "job_id", "job_partition",
              "job_user", "namespace", "pod", "serial_number")


def flags(argv):
    """-f X / --flag=X / --flag X pairs and bare switches (the real exporters' flags, no argparse)."""
    out, i = {}, 0
    while i < len(argv):
        arg = argv[i]
        if "=" in arg and arg.startswith("-"):
            key, value = arg.split("=", 1)
        elif i + 1 < len(argv) and not argv[i + 1].startswith("-"):
            key, value = arg, argv[i + 1]
            i += 1
        else:
            key, value = arg, "true"
        out[key.lstrip("-")] = value
        i += 1
    return out


def read_csv(path):
    """(field, prometheus type, help) rows; `#` lines and blank lines skipped, as the exporter does."""
    rows = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = [p.strip() for p in line.split(",", 2)]
            if len(parts) == 3:
                rows.append(tuple(parts))
    return rows


def read_script(path, now):
    """Events whose time has come: [(gpu, action, args)]."""
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    events = []
    for line in lines:
        parts = line.split("#", 1)[0].split()
        if len(parts) >= 3 and float(parts[0].rstrip("s")) <= now:
            events.append((float(parts[0].rstrip("s")), int(parts[1]), parts[2], parts[3:]))
    return sorted(events)


class State:
    """The GPUs' values at this moment: baseline, then the script's events in order."""

    def __init__(self, gpus, script):
        self.gpus, self.script = gpus, script

    def now(self):
        """(seconds since start, the GPUs still there, value(gpu, name, baseline), {gpu: [(at, xid)]})."""
        elapsed = time.time() - STARTED
        gone, sets, adds, xids = set(), {}, {}, {}
        for at, gpu, action, args in read_script(self.script, elapsed):
            if action == "gone":
                gone.add(gpu)
            elif action == "xid" and args:
                xids.setdefault(gpu, []).append((at, int(args[0])))
            elif action == "set" and len(args) == 2:
                sets[(gpu, args[0])], adds[(gpu, args[0])] = float(args[1]), 0.0
            elif action == "add" and len(args) == 2:
                adds[(gpu, args[0])] = adds.get((gpu, args[0]), 0.0) + float(args[1])

        def value(gpu, name, baseline):
            return sets.get((gpu, name), baseline) + adds.get((gpu, name), 0.0)
        return elapsed, [g for g in range(self.gpus) if g not in gone], value, xids


def dcgm_baseline(field, elapsed):
    name = field.upper()
    if "TEMP" in name:
        return 40.0
    if "POWER_USAGE" in name:
        return 150.0
    if "ENERGY" in name:
        return 150000.0 * elapsed
    if "CLOCK" in name and "EVENT" not in name:
        return 1980.0
    if name.endswith("FB_FREE"):
        return 140000.0
    if name.endswith("FB_USED"):
        return 1000.0
    if name.endswith("FB_RESERVED"):
        return 500.0
    return 0.0


def dcgm_value(field, value):
    # go-dcgm's int64 fields print as %d, the float ones (power, profiling ratios) as %f
    if "POWER_USAGE" in field or field.startswith("DCGM_FI_PROF_"):
        return "%f" % value
    return "%d" % int(value)


def go_float(value):
    """strconv.FormatFloat(v, 'g', -1, 64), as client_golang writes a sample: the shortest digits,
    in %e form where the exponent is below -4 or at least 6."""
    if value == 0:
        return "0"
    text = repr(float(value))           # Python's repr is the shortest round-trip form too
    sign = "-" if text.startswith("-") else ""
    mant, _e, exp = text.lstrip("-").partition("e")
    whole, _dot, frac = mant.partition(".")
    digits = whole + frac
    point = len(whole) + int(exp or 0)  # where the decimal point sits after the first digit of `digits`
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0") or "0"
    exp10 = point - 1
    if exp10 < -4 or exp10 >= 6:
        rest = digits[1:]
        return "%s%s%se%s%02d" % (sign, digits[0], "." + rest if rest else "", "-" if exp10 < 0 else "+", abs(exp10))
    if point <= 0:
        return sign + "0." + "0" * -point + digits
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return sign + digits[:point] + "." + digits[point:]


class Dcgm:
    def __init__(self, opts, gpus, model):
        self.csv = opts.get("f") or opts.get("collectors") or os.environ.get("DCGM_EXPORTER_COLLECTORS") or DCGM_CSV
        self.window = int(opts.get("x", XID_WINDOW_MS))
        self.rows = read_csv(self.csv)
        self.model = model if model.startswith("NVIDIA") else "NVIDIA " + model
        self.host = socket.gethostname()

    def render(self, state):
        elapsed, gpus, value, xids = state.now()
        labels = {f: DRIVER for f, kind, _h in self.rows if kind == "label"}
        out = []
        for field, kind, help_text in self.rows:
            if kind == "label":
                continue
            out.append("# HELP %s %s" % (field, help_text))
            out.append("# TYPE %s %s" % (field, kind))
            for gpu in gpus:
                for attrs, sample in self.samples(field, gpu, elapsed, value, xids):
                    extra = dict(labels, **attrs)
                    tail = "".join(',%s="%s"' % (k, extra[k]) for k in sorted(extra))
                    out.append('%s{gpu="%d",UUID="%s",pci_bus_id="%s",device="nvidia%d",modelName="%s",Hostname="%s"%s} %s'
                               % (field, gpu, uuid_of(self.host, gpu), "00000000:%02X:00.0" % (0x18 + gpu), gpu,
                                  self.model, self.host, tail, sample))
        return "\n".join(out) + "\n"

    def samples(self, field, gpu, elapsed, value, xids):
        seen = xids.get(gpu, [])
        if field == "DCGM_EXP_XID_ERRORS_COUNT":   # XIDs in the -x window, one series per XID, or a zero
            recent = {}
            for at, xid in seen:
                if elapsed - at <= self.window / 1000.0:
                    recent[xid] = recent.get(xid, 0) + 1
            window = {"window_size_in_ms": str(self.window)}
            if not recent:
                return [(window, "0")]
            return [(dict(window, xid=str(x)), str(n)) for x, n in sorted(recent.items())]
        if field == "DCGM_FI_DEV_XID_ERRORS":      # a gauge: the last XID
            return [({}, dcgm_value(field, float(seen[-1][1]) if seen else 0.0))]
        return [({}, dcgm_value(field, value(gpu, field, dcgm_baseline(field, elapsed))))]


def amd_baseline(name):
    if "junction_temperature" in name or "edge_temperature" in name:
        return 45.0
    if "temperature" in name:
        return 40.0
    if "power" in name:
        return 200.0
    if name.endswith("total_vram"):
        return 294896.0
    if name.endswith("used_vram"):
        return 312.0
    if name.endswith("gpu_health"):
        return 1.0
    return 0.0


class Amd:
    def __init__(self, opts, gpus, model):
        path = opts.get("amd-metrics-config", AMD_CONFIG)
        with open(path, encoding="utf-8") as fh:
            config = json.load(fh)
        prefix = config.get("CommonConfig", {}).get("MetricsFieldPrefix", "")
        self.names = [prefix + f.lower() for f in config.get("GPUConfig", {}).get("Fields", [])]
        self.port = int(config.get("ServerPort", 5000))
        self.model = model
        self.host = socket.gethostname()

    def render(self, state):
        _elapsed, gpus, value, _xids = state.now()
        out = []
        for name in self.names:
            out.append("# HELP %s %s" % (name, name.replace("_", " ")))
            out.append("# TYPE %s gauge" % name)
            for gpu in gpus:
                labels = dict.fromkeys(AMD_LABELS, "")
                labels.update(card_model=self.model, deployment_mode="baremetal", gpu_compute_partition_type="spx",
                              gpu_id=str(gpu), gpu_memory_partition_type="nps1", gpu_partition_id="0",
                              hostname=self.host, serial_number="STANDIN%04d" % gpu)
                sample = value(gpu, name, amd_baseline(name))
                body = ",".join('%s="%s"' % (k, labels[k]) for k in sorted(labels))
                out.append("%s{%s} %s" % (name, body, go_float(sample)))
        return "\n".join(out) + "\n"


def uuid_of(host, gpu):
    seed = sum(ord(c) * (i + 1) for i, c in enumerate(host)) & 0xFFFFFFFF
    return "GPU-%08x-%04x-%04x-%04x-%012x" % (seed, gpu, 0x4000 | gpu, 0x8000, seed * 7919 + gpu)


def gpu_profile(opts, amd):
    """(count, model) the container can see."""
    if "gpus" in opts:
        return int(opts["gpus"]), opts.get("model", "MI355X" if amd else "H200")
    if os.path.exists(PROFILE):
        with open(PROFILE, encoding="utf-8") as fh:
            prof = json.load(fh)
        return int(prof.get("count", 0)), str(prof.get("model", "GPU"))
    if amd and os.path.isdir("/dev/dri"):
        return len([n for n in os.listdir("/dev/dri") if re.match(r"renderD\d+$", n)]), opts.get("model", "MI355X")
    return 0, "none"


def main(argv):
    amd = os.path.basename(argv[0]).startswith("amd") or "--amd" in argv
    opts = flags([a for a in argv[1:] if a != "--amd"])
    gpus, model = gpu_profile(opts, amd)
    exporter = Amd(opts, gpus, model) if amd else Dcgm(opts, gpus, model)
    if not amd and gpus == 0:
        sys.stderr.write("dcgm-exporter stand-in: no GPUs visible in this container (no GPU profile at %s)\n" % PROFILE)
        return 1
    if amd:
        host, port = opts.get("address", ""), exporter.port
    else:
        listen = opts.get("a") or opts.get("address") or os.environ.get("DCGM_EXPORTER_LISTEN") or ":9400"
        host, _sep, port = listen.rpartition(":")
    state = State(gpus, opts.get("script") or os.environ.get("GPU_STANDIN_SCRIPT") or DEFAULT_SCRIPT)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path.split("?")[0] != "/metrics":
                self.send_error(404)
                return
            with lock:
                body = exporter.render(state).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args):
            pass

    class Server(ThreadingHTTPServer):
        def server_bind(self):
            # HTTPServer's own would look up the host's FQDN, which needs the idna codec the lean image lacks
            socketserver.TCPServer.server_bind(self)
            self.server_name, self.server_port = str(self.server_address[0]), self.server_address[1]

    server = Server((host, int(port)), Handler)
    sys.stderr.write("%s stand-in: %d x %s on %s:%s (remote host engine: %s)\n"
                     % ("amd-metrics-exporter" if amd else "dcgm-exporter", gpus, model, host or "*", port,
                        opts.get("r", "none (embedded)")))
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
