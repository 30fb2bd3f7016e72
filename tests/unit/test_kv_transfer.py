"""The smoke verdict's kv_transfer suite (smoke/kv_transfer.py): from the P/D sides' /metrics before and after, a
decode side that recomputes every prompt fails, one that received the KV passes. The metric lines are vLLM 0.32's
own (names and labels as its Prometheus logger writes them); tests/integration/test_disaggregation.py reads them
from real servers."""
from hypothesis import given, strategies as st

from ansible_collections.inferops.vllm.plugins.module_utils.controller.smoke import kv_transfer, report

SIDES = {"prefill": ["http://p:8000"], "decode": ["http://d:8000"]}


def metrics(local=0, cached=0, external=0, failed=0, ttft=(0.0, 0), tpot=(0.0, 0), engines=1):
    lines = ["# HELP vllm:prompt_tokens_by_source_total Number of prompt tokens by source.",
             "# TYPE vllm:prompt_tokens_by_source_total counter"]
    for engine in range(engines):
        for source, value in (("local_compute", local), ("local_cache_hit", cached), ("external_kv_transfer", external)):
            lines.append('vllm:prompt_tokens_by_source_total{engine="%d",model_name="m",source="%s"} %s'
                         % (engine, source, float(value) / engines))
        lines.append('vllm:nixl_num_failed_transfers_total{engine="%d",model_name="m"} %s' % (engine, float(failed) / engines))
        lines.append('vllm:time_to_first_token_seconds_sum{engine="%d",model_name="m"} %s' % (engine, ttft[0]))
        lines.append('vllm:time_to_first_token_seconds_count{engine="%d",model_name="m"} %s' % (engine, ttft[1]))
        lines.append('vllm:request_time_per_output_token_seconds_sum{engine="%d",model_name="m"} %s' % (engine, tpot[0]))
        lines.append('vllm:request_time_per_output_token_seconds_count{engine="%d",model_name="m"} %s' % (engine, tpot[1]))
    return "\n".join(lines) + "\n"


def judged(before_decode, after_decode, before_prefill=None, after_prefill=None):
    def snap(text):
        return kv_transfer.snapshot(["http://x"], lambda url: text)["http://x"]
    before = {"prefill": {"http://p:8000": snap(before_prefill or metrics())},
              "decode": {"http://d:8000": snap(before_decode)}}
    after = {"prefill": {"http://p:8000": snap(after_prefill or metrics(local=100, ttft=(0.5, 4)))},
             "decode": {"http://d:8000": snap(after_decode)}}
    return kv_transfer.judge(SIDES, before, after)


def levels(suite):
    return {c["name"]: c.get("level") for c in suite["checks"]}


def test_kv_that_moved_passes_with_its_figures():
    suite = judged(metrics(local=10), metrics(local=14, external=1200, tpot=(0.2, 4), engines=2))
    assert levels(suite) == {"KV moved from prefill to decode": "pass", "no failed KV transfers": "pass"}
    assert suite["figures"]["external_kv_transfer_tokens"] == 1200 and suite["figures"]["local_compute_tokens"] == 4
    assert suite["figures"]["prefill_mean_ttft_s"] == 0.125 and suite["figures"]["decode_mean_tpot_s"] == 0.05


def test_a_decode_side_that_recomputes_every_prompt_fails():
    suite = judged(metrics(), metrics(local=1204))
    check = next(c for c in suite["checks"] if c["name"] == "KV moved from prefill to decode")
    assert check["level"] == "fail" and "local_compute +1204, external_kv_transfer +0" in check["detail"]
    full = report.build([suite], {}, {})
    assert full["verdict"] == "FAILED" and "## KV transfer" in report.markdown(full)


def test_failed_transfers_and_an_unused_side_fail():
    suite = judged(metrics(), metrics(local=4, external=100, failed=2), after_prefill=metrics())
    assert levels(suite)["no failed KV transfers"] == "fail"
    assert levels(suite)["prefill side served the prompts"] == "fail"


def test_unreadable_metrics_fail_rather_than_pass():
    def broken(url):
        raise OSError("connection refused")
    snap = kv_transfer.snapshot(["http://d:8000"], broken)
    suite = kv_transfer.judge(SIDES, {"decode": snap, "prefill": {}}, {"decode": snap, "prefill": {}})
    assert [c["level"] for c in suite["checks"]] == ["fail"] and "connection refused" in suite["checks"][0]["detail"]


@given(local=st.integers(0, 10 ** 6), cached=st.integers(0, 10 ** 6), external=st.integers(0, 10 ** 6),
       failed=st.integers(0, 3), engines=st.integers(1, 4))
def test_the_verdict_passes_exactly_when_kv_moved_without_failures(local, cached, external, failed, engines):
    suite = judged(metrics(), metrics(local=local, cached=cached, external=external, failed=failed, engines=engines))
    passed = report.build([suite], {}, {})["passed"]
    assert passed == (external > 0 and failed == 0)
