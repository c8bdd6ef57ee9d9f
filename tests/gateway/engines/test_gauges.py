"""An engine's load gauges read from its /metrics, with the names and shapes of each engine's own
source (the samples in tests/gateway/engines/metrics/), and what it says checked, not trusted."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.engines.gauges import MAX_BODY, Gauges, GaugesError, read

SAMPLES = Path(__file__).parent / "metrics"


def sample(name: str) -> bytes:
    return (SAMPLES / name).read_bytes()


@pytest.mark.parametrize(
    ("name", "kind", "gauges"),
    [
        # Two data-parallel engines: running and waiting summed, the fuller engine's KV.
        ("vllm.txt", "vllm", Gauges(running=72, waiting=4, kv_usage=0.8143)),
        ("sglang.txt", "sglang", Gauges(running=79, waiting=6, kv_usage=0.91)),
        ("llamacpp.txt", "llamacpp", Gauges(running=4, waiting=7, kv_usage=None)),
    ],
)
def test_each_engines_gauges_are_read_by_their_own_names(name, kind, gauges):
    assert read(sample(name), kind) == gauges


def test_older_versions_are_read_by_the_names_they_had():
    old = read(sample("vllm_old.txt"), "vllm")
    assert old.kv_usage is not None and 0 <= old.kv_usage <= 1  # vllm:gpu_cache_usage_perc
    assert read(sample("llamacpp_old.txt"), "llamacpp").kv_usage is not None


def test_the_newest_name_wins_where_an_engine_reports_both():
    text = (
        "vllm:num_requests_running 1\nvllm:num_requests_waiting 0\n"
        "vllm:gpu_cache_usage_perc 0.9\nvllm:kv_cache_usage_perc 0.2\n"
    )
    assert read(text, "vllm").kv_usage == 0.2


def test_label_values_with_spaces_braces_and_escaped_quotes_do_not_confuse_the_reader():
    text = (
        'vllm:num_requests_running{model_name="a b} \\"c\\"",engine="0"} 3.0 1712345678000\n'
        "vllm:num_requests_waiting_by_reason{reason=\"capacity\"} 9\n"
        "vllm:num_requests_waiting 2e0\n"
    )
    assert read(text, "vllm") == Gauges(running=3, waiting=2, kv_usage=None)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "no vllm running or waiting gauge"),
        ('{"detail": "Not Found"}', "no vllm running or waiting gauge"),
        ("sglang:num_running_reqs 3\n", "no vllm running or waiting gauge"),  # another engine
        ("vllm:num_requests_running -1\n", "a negative running count"),
        ("vllm:num_requests_running NaN\n", "is NaN"),
        ("vllm:num_requests_waiting +Inf\n", r"is \+Inf"),
        ("vllm:num_requests_running 1\nvllm:kv_cache_usage_perc 1.5\n", "outside 0..1"),
        ("vllm:num_requests_running many\n", "not a number"),
        ("vllm:num_requests_running{engine=\"0\"\n", "malformed"),
        ("vllm:num_requests_running\n", "without a value"),
    ],
)
def test_metrics_no_engine_could_report_are_refused(text, why):
    with pytest.raises(GaugesError, match=why):
        read(text, "vllm")


def test_the_edge_cases_sample_lies_and_is_refused():
    with pytest.raises(GaugesError):
        read(sample("edge_cases.txt"), "vllm")


def test_a_body_too_large_is_not_read():
    with pytest.raises(GaugesError, match="more than"):
        read(b"#" * (MAX_BODY + 1), "vllm")


def test_bytes_that_are_not_utf8_are_read_as_far_as_they_go():
    text = b"\xff\xfe garbage\nllamacpp:requests_processing 2\nllamacpp:requests_deferred 0\n"
    assert read(text, "llamacpp") == Gauges(running=2, waiting=0, kv_usage=None)
