"""vllm_health's verdict over data-parallel ranks: a rank that hangs stands in with a probe's shape."""
import socket

from ansible_collections.inferops.vllm.plugins.module_utils.node import health
from ansible_collections.inferops.vllm.plugins.modules import vllm_health
from loopback_http import serving


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def params(url, ranks):
    return {"url": url, "served_model_name": "m", "api_key": None, "timeout": 2, "check_generation": True,
            "ranks": ranks}


def test_a_rank_that_hung_has_the_shape_of_a_probe(monkeypatch):
    url = "http://127.0.0.1:%d" % closed_port()
    refused = health.probe(url, "m", timeout=1)
    assert not refused["ready"] and refused["stage"] == "health"
    monkeypatch.setattr(vllm_health, "each_rank", lambda ranks, call, deadline: [None] * ranks)
    hung = vllm_health.probe_all(params(url, 2))
    assert set(hung) == set(refused) == set(health.not_ready())
    assert hung == dict(health.not_ready("generation", "2 of 2 ranks failed; rank 0: no answer within 6s"))


def test_one_rank_answers_for_itself():
    url = "http://127.0.0.1:%d" % closed_port()
    result = vllm_health.probe_all(params(url, 1))
    assert result == health.probe(url, "m", timeout=1) and result["stage"] == "health"


def test_without_a_model_name_only_health_is_asked():
    """vLLM's weight-cache daemon serves /health and nothing else (a real server on loopback)."""
    with serving(lambda path: 200 if path == "/health" else 404) as (url, asked):
        result = vllm_health.probe_all(dict(params(url, 1), served_model_name=None))
        assert result["ready"] and result["detail"] == "/health answered 200" and asked == ["/health"]
        assert not health.probe(url, "m", timeout=2)["ready"]   # with a name, /v1/models must list it
