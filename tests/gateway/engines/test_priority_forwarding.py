"""Backend priority forwarding: mode parsing, resolution against detected profiles, body rewrite."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.core.classes import CLASS_NAMES, HIGH, LOW, MEDIUM
from gateway.core.scheduling_fields import strip_scheduling
from gateway.engines.priority_forwarding import (
    AUTO,
    GATEWAY,
    PROTECTED_FIELDS,
    Mapping,
    MappingError,
    PriorityMode,
    apply_mapping,
    explain_mapping,
    parse_priority_mode,
    resolve_mapping,
)
from gateway.engines.profiles import EngineProfile

VLLM_CUSTOM = PriorityMode("custom", "priority", 1, 0, -1)


def sglang(
    enabled: bool | None = True, policy: str | None = "fcfs", low_first: bool | None = False
) -> EngineProfile:
    return EngineProfile(
        kind="sglang",
        version="0.5.4",
        priority_scheduling=enabled,
        schedule_policy=policy,
        low_values_first=low_first,
        detected_at=1.0,
    )


LARGER_FIRST = Mapping("priority", (0, 1, 2))
SMALLER_FIRST = Mapping("priority", (2, 1, 0))

RESOLUTIONS = [
    pytest.param(AUTO, sglang(), LARGER_FIRST, id="auto sglang fcfs larger first"),
    pytest.param(AUTO, sglang(policy="lof"), LARGER_FIRST, id="auto sglang lof larger first"),
    pytest.param(AUTO, sglang(low_first=True), SMALLER_FIRST, id="auto sglang fcfs smaller first"),
    pytest.param(
        AUTO, sglang(policy="lof", low_first=True), SMALLER_FIRST, id="auto sglang lof smaller"
    ),
    pytest.param(AUTO, sglang(enabled=None), None, id="auto sglang missing enable flag"),
    pytest.param(AUTO, sglang(enabled=False), None, id="auto sglang scheduling disabled"),
    pytest.param(AUTO, sglang(policy=None), None, id="auto sglang missing policy"),
    pytest.param(AUTO, sglang(policy="lpm"), None, id="auto sglang policy lpm"),
    pytest.param(AUTO, sglang(low_first=None), None, id="auto sglang missing direction"),
    pytest.param(AUTO, EngineProfile("sglang"), None, id="auto sglang with nothing reported"),
    pytest.param(AUTO, EngineProfile("vllm", "0.11.0"), None, id="auto vllm"),
    pytest.param(AUTO, EngineProfile("llamacpp"), None, id="auto llamacpp"),
    pytest.param(AUTO, EngineProfile("ollama"), None, id="auto ollama"),
    pytest.param(AUTO, EngineProfile("generic"), None, id="auto generic"),
    pytest.param(AUTO, EngineProfile("unknown"), None, id="auto unknown"),
    pytest.param(AUTO, None, None, id="auto never detected"),
    # Even a report claiming priority scheduling proves nothing for a non-SGLang engine.
    pytest.param(
        AUTO,
        EngineProfile(
            "vllm", priority_scheduling=True, schedule_policy="fcfs", low_values_first=True
        ),
        None,
        id="auto vllm with sglang-like fields",
    ),
    pytest.param(GATEWAY, sglang(), None, id="gateway ignores enabled sglang"),
    pytest.param(GATEWAY, EngineProfile("vllm"), None, id="gateway vllm"),
    pytest.param(GATEWAY, None, None, id="gateway never detected"),
    pytest.param(
        VLLM_CUSTOM, EngineProfile("generic"), Mapping("priority", (1, 0, -1)), id="custom generic"
    ),
    pytest.param(VLLM_CUSTOM, None, Mapping("priority", (1, 0, -1)), id="custom never detected"),
    pytest.param(
        PriorityMode("custom", "prio", 5, 6, 7),
        sglang(low_first=True),
        Mapping("prio", (5, 6, 7)),
        id="custom overrides sglang detection",
    ),
]


@pytest.mark.parametrize(("mode", "profile", "expected"), RESOLUTIONS)
def test_resolution_forwards_only_what_is_proved_or_configured(
    mode: PriorityMode, profile: EngineProfile | None, expected: Mapping | None
) -> None:
    assert resolve_mapping(mode, profile) == expected


@pytest.mark.parametrize(("mode", "profile", "expected"), RESOLUTIONS)
def test_the_explanation_agrees_with_the_resolution(
    mode: PriorityMode, profile: EngineProfile | None, expected: Mapping | None
) -> None:
    reason = explain_mapping(mode, profile)
    assert reason.startswith("forwarding" if expected else "not forwarded")
    if expected is not None:
        assert f"'{expected.field}'" in reason


@pytest.mark.parametrize(
    ("mode", "profile", "reason"),
    [
        (AUTO, sglang(), "forwarding priority as field 'priority' (larger first)"),
        (AUTO, sglang(low_first=True), "forwarding priority as field 'priority' (smaller first)"),
        (AUTO, sglang(enabled=None),
         "not forwarded: SGLang did not report enable_priority_scheduling"),
        (AUTO, sglang(low_first=None),
         "not forwarded: SGLang did not report schedule_low_priority_values_first"),
        (GATEWAY, sglang(), "not forwarded: gateway-only mode"),
        (VLLM_CUSTOM, None,
         "forwarding priority as field 'priority' (manual: low=1, medium=0, high=-1)"),
    ],
)  # fmt: skip
def test_explanations_name_the_deciding_fact(
    mode: PriorityMode, profile: EngineProfile | None, reason: str
) -> None:
    assert explain_mapping(mode, profile) == reason


def test_the_sglang_policy_that_ignores_priority_is_named() -> None:
    assert "'lpm'" in explain_mapping(AUTO, sglang(policy="lpm"))


def test_an_incomplete_hand_built_custom_mode_forwards_nothing() -> None:
    mode = PriorityMode("custom", "priority", 1, None, -1)
    assert resolve_mapping(mode, None) is None
    assert explain_mapping(mode, None) == "not forwarded: the manual mapping is incomplete"


# --- parsing ------------------------------------------------------------------------------


def custom(**mapping: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"field": "priority", "low": 1, "medium": 0, "high": -1}
    base.update(mapping)
    return {"mode": "custom", "mapping": base}


@pytest.mark.parametrize(
    "payload",
    [
        {"mode": "auto"},
        {"mode": "gateway"},
        {"mode": "custom", "mapping": {"field": "priority", "low": 1, "medium": 0, "high": -1}},
        {"mode": "custom", "mapping": {"field": "_Prio9", "low": 0, "medium": 0, "high": 0}},
    ],
)
def test_every_valid_mode_round_trips_through_json(payload: dict[str, Any]) -> None:
    assert parse_priority_mode(payload).to_json() == payload


def test_the_vllm_example_parses_to_its_mapping() -> None:
    mode = parse_priority_mode(custom())
    assert mode == VLLM_CUSTOM
    assert resolve_mapping(mode, None) == Mapping("priority", (1, 0, -1))


def test_a_leftover_mapping_is_dropped_outside_custom_mode() -> None:
    assert parse_priority_mode({"mode": "gateway", "mapping": {"field": "x"}}).to_json() == {
        "mode": "gateway"
    }


@pytest.mark.parametrize(
    ("payload", "param", "code"),
    [
        pytest.param(None, "priority", "invalid_priority_mode", id="null"),
        pytest.param("auto", "priority", "invalid_priority_mode", id="a bare string"),
        pytest.param([{"mode": "auto"}], "priority", "invalid_priority_mode", id="a list"),
        pytest.param({}, "priority.mode", "invalid_priority_mode", id="no mode"),
        pytest.param({"mode": "fast"}, "priority.mode", "invalid_priority_mode", id="unknown"),
        pytest.param({"mode": "AUTO"}, "priority.mode", "invalid_priority_mode", id="wrong case"),
        pytest.param({"mode": 1}, "priority.mode", "invalid_priority_mode", id="int mode"),
        pytest.param(
            {"mode": "custom"}, "priority.mapping", "invalid_priority_mapping", id="no mapping"
        ),
        pytest.param(
            {"mode": "custom", "mapping": None},
            "priority.mapping",
            "invalid_priority_mapping",
            id="null mapping",
        ),
        pytest.param(
            {"mode": "custom", "mapping": [1, 0, -1]},
            "priority.mapping",
            "invalid_priority_mapping",
            id="list mapping",
        ),
        pytest.param(
            {"mode": "custom", "mapping": {"low": 1, "medium": 0, "high": -1}},
            "priority.mapping.field",
            "invalid_priority_mapping",
            id="no field",
        ),
        pytest.param(custom(field=""), "priority.mapping.field", "invalid_priority_mapping",
                     id="empty field"),
        pytest.param(custom(field="nvext.priority"), "priority.mapping.field",
                     "invalid_priority_mapping", id="dotted path"),
        pytest.param(custom(field="9lives"), "priority.mapping.field",
                     "invalid_priority_mapping", id="leading digit"),
        pytest.param(custom(field="pri ority"), "priority.mapping.field",
                     "invalid_priority_mapping", id="space"),
        pytest.param(custom(field="priority\n"), "priority.mapping.field",
                     "invalid_priority_mapping", id="trailing newline"),
        pytest.param(custom(field="x" * 65), "priority.mapping.field",
                     "invalid_priority_mapping", id="65 characters"),
        pytest.param(custom(field=7), "priority.mapping.field", "invalid_priority_mapping",
                     id="int field"),
        pytest.param(custom(low=None), "priority.mapping.low", "invalid_priority_mapping",
                     id="null low"),
        pytest.param(custom(medium="0"), "priority.mapping.medium", "invalid_priority_mapping",
                     id="string medium"),
        pytest.param(custom(high=-1.0), "priority.mapping.high", "invalid_priority_mapping",
                     id="float high"),
        pytest.param(custom(low=2**31), "priority.mapping.low", "invalid_priority_mapping",
                     id="beyond int32"),
    ],
)  # fmt: skip
def test_invalid_modes_are_rejected_with_exact_param_and_code(
    payload: object, param: str, code: str
) -> None:
    with pytest.raises(MappingError) as caught:
        parse_priority_mode(payload)
    assert (caught.value.param, caught.value.code) == (param, code)
    assert caught.value.message == str(caught.value)


def test_a_missing_class_value_names_that_class() -> None:
    payload = {"mode": "custom", "mapping": {"field": "priority", "low": 1, "high": -1}}
    with pytest.raises(MappingError) as caught:
        parse_priority_mode(payload)
    assert (caught.value.param, caught.value.code) == (
        "priority.mapping.medium",
        "invalid_priority_mapping",
    )


@pytest.mark.parametrize("name", CLASS_NAMES)
@pytest.mark.parametrize("value", [True, False])
def test_booleans_are_not_integers(name: str, value: bool) -> None:
    with pytest.raises(MappingError) as caught:
        parse_priority_mode(custom(**{name: value}))
    assert (caught.value.param, caught.value.code) == (
        f"priority.mapping.{name}",
        "invalid_priority_mapping",
    )


REQUIRED_PROTECTED = [
    "model", "messages", "prompt", "input", "tools", "tool_choice", "functions", "function_call",
    "stream", "stream_options", "n", "max_tokens", "max_completion_tokens", "temperature",
    "top_p", "top_k", "min_p", "frequency_penalty", "presence_penalty", "repetition_penalty",
    "stop", "seed", "logit_bias", "logprobs", "top_logprobs", "response_format", "user",
    "suffix", "echo", "best_of",
]  # fmt: skip


@pytest.mark.parametrize("field", sorted(set(REQUIRED_PROTECTED) | PROTECTED_FIELDS))
def test_a_protected_request_field_cannot_carry_priority(field: str) -> None:
    with pytest.raises(MappingError) as caught:
        parse_priority_mode(custom(field=field))
    assert (caught.value.param, caught.value.code) == (
        "priority.mapping.field",
        "protected_priority_field",
    )


@pytest.mark.parametrize("field", ["priority", "request_priority", "Model", "sched_prio"])
def test_unprotected_field_names_are_accepted(field: str) -> None:
    assert parse_priority_mode(custom(field=field)).field == field


def test_mapping_error_is_a_value_error() -> None:
    assert issubclass(MappingError, ValueError)


# --- engine profile -----------------------------------------------------------------------


def test_a_profile_round_trips_through_json() -> None:
    profile = sglang(low_first=True)
    assert EngineProfile.from_json(profile.to_json()) == profile


def test_a_stored_profile_with_wrong_types_proves_nothing() -> None:
    stored = {
        "kind": "sglang",
        "version": 5,
        "priority_scheduling": "true",
        "schedule_policy": ["fcfs"],
        "low_values_first": 0,
        "detected_at": True,
    }
    assert EngineProfile.from_json(stored) == EngineProfile("sglang")
    assert resolve_mapping(AUTO, EngineProfile.from_json(stored)) is None


@pytest.mark.parametrize("stored", [None, "sglang", [], {"kind": "tgi"}])
def test_an_unreadable_stored_profile_is_unknown(stored: object) -> None:
    assert EngineProfile.from_json(stored).kind == "unknown"


# --- body rewrite -------------------------------------------------------------------------


def request_body() -> dict[str, Any]:
    return {
        "model": "llama",
        "messages": [{"role": "user", "content": "hi", "priority": "keep me"}],
        "temperature": 0.2,
        "metadata": {"priority": "keep me too"},
        "nvext": {
            "agent_hints": {"priority": 100, "strict_priority": True, "latency_sensitivity": 1},
            "annotations": ["x"],
        },
        "priority": 99,
    }


@pytest.mark.parametrize(
    ("mapping", "cls", "value"),
    [
        (LARGER_FIRST, LOW, 0),
        (LARGER_FIRST, MEDIUM, 1),
        (LARGER_FIRST, HIGH, 2),
        (SMALLER_FIRST, LOW, 2),
        (SMALLER_FIRST, MEDIUM, 1),
        (SMALLER_FIRST, HIGH, 0),
        (Mapping("priority", (1, 0, -1)), LOW, 1),
        (Mapping("priority", (1, 0, -1)), MEDIUM, 0),
        (Mapping("priority", (1, 0, -1)), HIGH, -1),
    ],
)
def test_apply_sets_exactly_the_mapped_value_for_the_class(
    mapping: Mapping, cls: int, value: int
) -> None:
    body = request_body()
    apply_mapping(body, mapping, cls)
    assert body["priority"] == value
    assert type(body["priority"]) is int
    assert "nvext" not in body  # agent_hints and annotations: nothing of it may pass


def test_apply_with_a_custom_field_still_removes_client_priority() -> None:
    body = request_body()
    apply_mapping(body, Mapping("sched_prio", (10, 20, 30)), HIGH)
    assert body["sched_prio"] == 30
    assert "priority" not in body


def test_apply_replaces_a_client_value_in_the_mapped_field() -> None:
    body: dict[str, Any] = {"model": "m", "sched_prio": 1000}
    apply_mapping(body, Mapping("sched_prio", (10, 20, 30)), LOW)
    assert body == {"model": "m", "sched_prio": 10}


def test_apply_without_a_mapping_only_strips() -> None:
    body = request_body()
    apply_mapping(body, None, HIGH)
    expected = request_body()
    strip_scheduling(expected)
    assert body == expected


@pytest.mark.parametrize("cls", [-1, 3])
def test_apply_refuses_a_class_out_of_range(cls: int) -> None:
    with pytest.raises(ValueError, match="out of range"):
        apply_mapping({"model": "m"}, LARGER_FIRST, cls)


def test_apply_rewrites_the_body_in_place() -> None:
    body = request_body()
    messages = body["messages"]
    apply_mapping(body, LARGER_FIRST, MEDIUM)
    assert body["messages"] is messages
