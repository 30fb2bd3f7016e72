"""The weights as a site stages them: one pinned commit in a genuine Hugging Face cache on
every node, each blob matching its name, recorded, served read-only and offline; the store
host's registry carries them as one artifact, one layer per file."""
import hashlib
import json
import os
import shlex

REPO, REVISION = "inferops/tiny-k3", os.environ["INFEROPS_HUB_TINY_K3_REVISION"]
CACHE = "/srv/models/huggingface/hub/models--inferops--tiny-k3"


def node_files(host):
    """{path in the snapshot: (blob name, sha256, git sha1, size)} read on the node."""
    script = (
        "import hashlib, json, os\n"
        "snap = %r\n"
        "out = {}\n"
        "for root, _d, files in os.walk(snap):\n"
        "    for f in files:\n"
        "        p = os.path.join(root, f)\n"
        "        data = open(p, 'rb').read()\n"
        "        out[os.path.relpath(p, snap)] = [os.path.basename(os.path.realpath(p)), hashlib.sha256(data).hexdigest(),\n"
        "            hashlib.sha1(b'blob %%d\\0' %% len(data) + data).hexdigest(), len(data), os.path.islink(p)]\n"
        "print(json.dumps(out))\n") % (CACHE + "/snapshots/" + REVISION)
    return json.loads(host.check_output("python3 -c %s" % shlex.quote(script)))


def test_every_file_of_the_commit_is_a_link_to_a_blob_named_by_its_hash(host):
    files = node_files(host)
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= set(files)
    for path, (blob, sha256, sha1, _size, is_link) in files.items():
        assert is_link, path
        assert blob in (sha256, sha1), "%s: blob %s matches neither its sha256 nor its git sha1" % (path, blob)
    assert not host.run("find %s -name '*.incomplete'" % CACHE).stdout.strip()


def test_the_node_records_what_it_holds(host):
    record_file = host.file("/var/lib/inferops-vllm/model.json")
    assert record_file.mode == 0o644 and record_file.user == "root"
    current = json.loads(record_file.content_string)["current"]
    assert current["repo"] == REPO and current["revision"] == REVISION
    assert current["manifest"].startswith("sha256:") and len(current["manifest"]) == 71
    assert current["bytes"] == sum(f[3] for f in node_files(host).values())


def test_vllm_reads_the_weights_offline_and_read_only(host):
    info = json.loads(host.check_output("docker inspect vllm"))[0]
    mounts = {m["Destination"]: m for m in info["Mounts"]}
    assert mounts["/root/.cache/huggingface"]["Source"] == "/srv/models/huggingface"
    assert mounts["/root/.cache/huggingface"]["RW"] is False
    assert "HF_HUB_OFFLINE=1" in info["Config"]["Env"]
    assert 'revision: "%s"' % REVISION in host.file("/etc/inferops-vllm/vllm.yaml").content_string


def test_the_site_registry_carries_one_artifact_layer_per_file(host):
    if host.backend.get_hostname() != "serve-node1":
        return
    manifest_raw = host.check_output(
        "curl -sf -H 'Accept: application/vnd.oci.image.manifest.v1+json' "
        "http://127.0.0.1:5001/v2/inferops-models/inferops/tiny-k3/manifests/%s" % REVISION)
    manifest = json.loads(manifest_raw)
    assert manifest["artifactType"] == "application/vnd.cncf.model.manifest.v1+json"
    by_path = {layer["annotations"]["org.cncf.model.filepath"]: layer for layer in manifest["layers"]}
    files = node_files(host)
    assert set(by_path) == set(files)
    for path, layer in by_path.items():
        assert layer["digest"] == "sha256:" + files[path][1] and layer["size"] == files[path][3]
    digest = "sha256:" + hashlib.sha256(manifest_raw.encode()).hexdigest()
    record = json.loads(host.file("/var/lib/inferops-vllm/model.json").content_string)
    assert record["current"]["manifest"] == digest
