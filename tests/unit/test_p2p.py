"""Peer-to-peer weights, the parts that need no swarm: bencoding round-trips and refuses what is not one value,
a torrent's pieces are the blob's, the swarm a node is handed is checked whole, and the staging folder is
emptied of anything aria2c could write through. The swarm itself runs for real in
tests/integration/test_weights.py (opentracker, aria2c)."""
import hashlib
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.inferops.vllm.plugins.module_utils.node import p2p
from ansible_collections.inferops.vllm.plugins.module_utils.node import weights_fetch as wf

VALUES = st.recursive(
    st.integers(min_value=-(10 ** 20), max_value=10 ** 20) | st.binary(max_size=64),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.binary(max_size=8), inner, max_size=5),
    max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_bencoding_round_trips_exactly(value):
    data = p2p.bencode(value)
    assert p2p.bdecode(data) == value
    assert p2p.bencode(p2p.bdecode(data)) == data


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=80))
def test_any_bytes_decode_to_one_value_or_a_value_error(data):
    """A tracker's answer is untrusted: nothing but ValueError (or IndexError-free success) comes out. What decodes
    is one value, which encodes back to the same bytes up to the order of a dictionary's keys (real trackers send
    theirs in their own order, and the decoder takes that): decoding the encoding gives the same value."""
    try:
        value = p2p.bdecode(data)
    except ValueError:
        return
    again = p2p.bencode(value)
    assert p2p.bdecode(again) == value and len(again) == len(data)


def test_a_dictionary_in_the_trackers_order_decodes():
    """opentracker's scrape lists the swarms in its own order: decoded, then encoded sorted."""
    assert p2p.bdecode(b"d1:bi2e1:ai1ee") == {b"b": 2, b"a": 1}
    assert p2p.bencode(p2p.bdecode(b"d1:bi2e1:ai1ee")) == b"d1:ai1e1:bi2ee"


@pytest.mark.parametrize("data", [b"i01e", b"i-0e", b"3:ab", b"d1:ai1ee1:x", b"li1e", b"d i1e1:ae", b"l" * 40 + b"e" * 40,
                                  b"01:a", b"i1e i2e"])
def test_what_is_not_one_canonical_value_is_refused(data):
    with pytest.raises(ValueError):
        p2p.bdecode(data)


@pytest.mark.parametrize("size,length", [(0, 256 << 10), (1, 256 << 10), (1 << 30, 256 << 10), ((1 << 30) + 1, 512 << 10),
                                         (5 << 30, 2 << 20), (1 << 40, 16 << 20)])
def test_pieces_are_few_and_bounded(size, length):
    assert p2p.piece_length(size) == length


def test_a_torrent_names_the_blob_by_its_sha256_and_hashes_its_pieces(tmp_path):
    data = os.urandom((600 << 10) + 7)
    blob = tmp_path / "blob"
    blob.write_bytes(data)
    sha = hashlib.sha256(data).hexdigest()
    meta = p2p.bdecode(p2p.torrent_of(str(blob), sha, len(data)))
    info = meta[b"info"]
    assert info[b"name"] == sha.encode() and info[b"length"] == len(data) and b"announce" not in meta
    step = info[b"piece length"]
    assert info[b"pieces"] == b"".join(hashlib.sha1(data[i:i + step]).digest() for i in range(0, len(data), step))
    with pytest.raises(p2p.P2PError, match="not the blob"):
        p2p.torrent_of(str(blob), sha, len(data) + 1)


def test_the_store_hashes_a_blob_once_and_links_it_for_the_seeder(tmp_path, monkeypatch):
    data = b"x" * 1000
    blob = tmp_path / "blob"
    blob.write_bytes(data)
    sha = hashlib.sha256(data).hexdigest()
    first = p2p.prepare(str(tmp_path / "p2p"), {sha: (str(blob), len(data))})
    assert os.path.samefile(tmp_path / "p2p/seed" / sha, blob)
    monkeypatch.setattr(p2p, "torrent_of", lambda *a: pytest.fail("hashed again"))
    (tmp_path / "p2p/seed" / sha).unlink()
    (tmp_path / "p2p/seed" / sha).symlink_to(tmp_path / "elsewhere")
    assert p2p.prepare(str(tmp_path / "p2p"), {sha: (str(blob), len(data))}) == first
    assert not (tmp_path / "p2p/seed" / sha).is_symlink() and os.path.samefile(tmp_path / "p2p/seed" / sha, blob)


@pytest.mark.parametrize("announce,torrents,why", [
    ("http://10.0.0.5:6969/announce", {"a" * 64: "b" * 40}, ""),
    ("http://10.0.0.5:6969/announce?x=1", {}, "announce"),
    ("http://10.0.0.5:6969/announce\n", {}, "announce"),
    ("file:///etc/passwd", {}, "announce"),
    ("http://10.0.0.5:6969/announce", {"a" * 64: "B" * 40}, "info-hash"),
    ("http://10.0.0.5:6969/announce", {"../x": "b" * 40}, "info-hash"),
    ("http://10.0.0.5:6969/announce", ["b" * 40], "map"),
])
def test_the_swarm_a_node_is_handed_is_checked_whole(announce, torrents, why):
    if not why:
        assert p2p.checked_swarm(announce, torrents) == (announce, torrents)
        return
    with pytest.raises(p2p.P2PError, match=why):
        p2p.checked_swarm(announce, torrents)


def test_a_magnet_carries_the_info_hash_and_the_tracker_only():
    link = p2p.magnet("b" * 40, "http://10.0.0.5:6969/announce")
    assert link == "magnet:?xt=urn:btih:" + "b" * 40 + "&tr=http%3A%2F%2F10.0.0.5%3A6969%2Fannounce"


def test_staging_keeps_only_the_wanted_partials_as_plain_files(tmp_path):
    staging = tmp_path / "staging"
    staging.mkdir()
    target = tmp_path / "target"
    target.write_text("keep me")
    (staging / ("a" * 64)).write_bytes(b"partial")
    (staging / ("a" * 64 + ".aria2")).write_bytes(b"control")
    (staging / ("b" * 64)).symlink_to(target)
    (staging / ("c" * 64)).mkdir()
    (staging / ("c" * 64) / "x").symlink_to(target)
    os.link(target, staging / ("d" * 64))   # a hard link to a file elsewhere would be written through
    (staging / "stale").write_bytes(b"old")
    fd = os.open(staging, os.O_RDONLY | os.O_DIRECTORY)
    try:
        wf.clear_staging(fd, ["a" * 64, "b" * 64, "c" * 64, "d" * 64])
    finally:
        os.close(fd)
    assert sorted(os.listdir(staging)) == ["a" * 64, "a" * 64 + ".aria2"]
    assert target.read_text() == "keep me"


def test_aria2c_is_bounded_quiet_and_discovers_peers_by_the_tracker_only():
    node = p2p.aria2c_argv("/proc/self/fd/5", "10.0.0.7", 60, "http://10.0.0.5:6969/announce", seeder=False)
    assert "--enable-dht=false" in node and "--bt-enable-lpd=false" in node and "--seed-time=0" in node
    assert "--bt-stop-timeout=60" in node and node[node.index("--interface") + 1] == "10.0.0.7"
    seeder = p2p.aria2c_argv("/srv/p2p/seed", "10.0.0.5", 0, "http://10.0.0.5:6969/announce", seeder=True)
    assert "--seed-time=0" not in seeder and seeder[seeder.index("--bt-tracker") + 1].endswith("/announce")
    assert p2p.tracker_argv("/srv/p2p", "10.0.0.5", 6969)[:3] == ["opentracker", "-i", "10.0.0.5"]


def test_the_tracker_needs_an_ip_address(tmp_path):
    with pytest.raises(p2p.P2PError, match="vllm_model_p2p_address"):
        p2p.seed(str(tmp_path), {"a" * 64: "b" * 40}, "store.example", 6969, timeout=1)


def test_a_node_without_kept_metadata_does_not_seed(tmp_path):
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        out = p2p.linger(fd, ["a" * 64], "http://127.0.0.1:9/announce", {"a" * 64: "b" * 40})
    finally:
        os.close(fd)
    assert out == {"seconds": 0.0, "ended": "no metadata kept to seed from"}
