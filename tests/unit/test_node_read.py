"""One read of a node for every role of a run: node_read runs the roles' reads in one module call (the real module,
as Ansible runs it on a node), and read_ahead answers a later task from it only where that is the same read, the
node was as wanted in all of it, and the read is fresh."""
import json
import os
import subprocess
import sys

from ansible_collections.inferops.vllm.plugins.module_utils.controller import read_ahead

REF = "127.0.0.1:5000/inferops/standin-vllm@sha256:" + "a" * 64
OTHER = "127.0.0.1:5000/inferops/standin-vllm@sha256:" + "b" * 64


def node(tmp_path, module, has_image=True, **args):
    """A module run as Ansible runs it on a node; `docker image inspect` answers for REF where has_image."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    docker = bin_dir / "docker"
    docker.write_text("#!/bin/sh\n" + ("echo '[{\"Id\": \"sha256:1\", \"RepoDigests\": [\"%s\"]}]'\n" % REF
                                       if has_image else "echo 'Error: No such image' >&2; exit 1\n"))
    docker.chmod(0o755)
    params = tmp_path / "args.json"
    params.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
    env = dict(os.environ, PATH="%s:%s" % (bin_dir, os.environ["PATH"]), PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-m", "ansible_collections.inferops.vllm.plugins.modules." + module,
                          str(params)], env=env, capture_output=True, text=True, check=False)
    return json.loads(out.stdout)


def reads(tmp_path, ref=REF, wanted_mode="0644"):
    conf = tmp_path / "etc.conf"
    conf.write_text("x\n")
    conf.chmod(0o644)
    return [
        {"module": "gpu_facts", "args": {"warn_secure_boot": True}},
        {"module": "node_state", "args": {"files": [str(conf)],
                                          "wanted": {"conf": {"files": {str(conf): {"mode": wanted_mode}}}}}},
        {"module": "image_record", "args": {"path": str(tmp_path / "state" / "image.json"), "ref": ref, "node": "n1"}},
    ]


def test_one_call_answers_each_read_as_its_own_module_would(tmp_path):
    calls = reads(tmp_path)
    answer = node(tmp_path, "node_read", calls=calls)
    assert not answer.get("failed") and len(answer["results"]) == 3
    gpu, state, image = answer["results"]
    own_state = node(tmp_path, "node_state", **calls[1]["args"])
    assert state["steps"] == own_state["steps"] and state["files"] == own_state["files"]
    assert gpu["ansible_facts"]["gpu_facts"]["vendor"] is None   # this machine has no GPU tool
    # an image_record that would record is answered as in check mode: nothing written
    assert image["changed"] is True and image["to_run"] == REF and not (tmp_path / "state").exists()
    own = node(tmp_path, "image_record", **calls[2]["args"])
    assert own["changed"] and (tmp_path / "state" / "image.json").exists()
    again = node(tmp_path, "node_read", calls=calls)["results"][2]
    assert (again["changed"], again["pull_needed"], again["to_run"]) == (False, False, REF)


def test_a_read_that_fails_is_returned_failed_for_its_own_task(tmp_path):
    calls = [{"module": "node_state", "args": {"wanted": {"conf": {"files": {"/etc/x": {"mod": "0644"}}}}}},
             {"module": "image_record", "args": {"ref": REF, "retry_failed": "maybe"}},
             {"module": "systemd", "args": {}}]
    results = node(tmp_path, "node_read", calls=calls)["results"]
    assert results[0]["failed"] and "never judged" in results[0]["msg"]
    assert results[1]["failed"] and "retry_failed" in results[1]["msg"]
    assert results[2]["failed"] and "cannot run 'systemd'" in results[2]["msg"]


def test_a_later_task_is_answered_only_from_the_same_fresh_read_of_a_node_as_wanted(tmp_path):
    calls = reads(tmp_path)
    node(tmp_path, "image_record", **calls[2]["args"])   # the node records the image it has: nothing due now
    results = node(tmp_path, "node_read", calls=calls)["results"]
    kept = read_ahead.record(calls, results, max_age=300, now=1000.0)
    assert kept["converged"] is True
    task_vars = {"node_read_state": kept}
    # the same read, its arguments written otherwise (a default given, a bool as text): answered
    gpu = read_ahead.answer(task_vars, "gpu_facts", {"warn_secure_boot": "yes", "sysfs_root": "/sys"}, now=1001.0)
    assert gpu["ansible_facts"] == results[0]["ansible_facts"] and gpu["node_read"] is True
    assert read_ahead.answer(task_vars, "image_record", calls[2]["args"], now=1001.0)["to_run"] == REF
    # another read, an old read, no read: the task reads the node itself
    assert read_ahead.answer(task_vars, "gpu_facts", {"memory_usage": True}, now=1001.0) is None
    assert read_ahead.answer(task_vars, "gpu_facts", {"warn_secure_boot": True}, now=1301.0) is None
    assert read_ahead.answer({}, "gpu_facts", {"warn_secure_boot": True}) is None
    assert read_ahead.answer({"node_read_state": {"skipped": True}}, "gpu_facts", {"warn_secure_boot": True}) is None


def test_a_node_that_differs_anywhere_is_read_by_every_role(tmp_path):
    """A step that differs, a pull that is due or a read that failed: the roles may change the node, so none of the
    reads is answered, not even an unrelated one."""
    for calls, has_image in ((reads(tmp_path, wanted_mode="0600"), True), (reads(tmp_path, ref=OTHER), False)):
        node(tmp_path, "image_record", **reads(tmp_path)[2]["args"])
        kept = read_ahead.record(calls, node(tmp_path, "node_read", has_image, calls=calls)["results"], 300, now=1.0)
        assert kept["converged"] is False
        assert read_ahead.answer({"node_read_state": kept}, "gpu_facts", {"warn_secure_boot": True}, now=2.0) is None
    failed = read_ahead.record([{"module": "node_state", "args": {}}], [{"failed": True, "msg": "x"}], 300, now=1.0)
    assert failed["converged"] is False


def test_keys_are_the_modules_view_of_the_arguments():
    assert read_ahead.key("gpu_facts", {}) == read_ahead.key("gpu_facts", {"sysfs_root": "/sys", "memory_usage": False})
    assert read_ahead.key("gpu_facts", {}) != read_ahead.key("node_state", {})
    assert read_ahead.key("node_state", {"packages": ["a", "b"]}) != read_ahead.key("node_state", {"packages": ["b", "a"]})
    assert read_ahead.key("image_record", {"state": "sideways"}) is None and read_ahead.key("copy", {}) is None
