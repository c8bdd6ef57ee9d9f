"""The allowance rules as tables: parsing, the most generous group, the ceiling, resolution."""

from __future__ import annotations

import pytest

from accounts.allowances import (
    UNLIMITED,
    Counted,
    InvalidAllowance,
    Limit,
    Measure,
    Resolution,
    Window,
    above_ceiling,
    ceiling,
    combined,
    counted,
    inherited_allowance,
    parse_allowance,
    resolve_allowance,
)

REQ, TOK, IN, OUT = Measure.REQUESTS, Measure.TOKENS, Measure.INPUT, Measure.OUTPUT
MIN, DAY, MONTH = Window.MINUTE, Window.DAY, Window.MONTH


def rpm(n: int, model: str | None = None) -> Limit:
    return Limit(REQ, MIN, n, model)


def tpd(n: int, model: str | None = None) -> Limit:
    return Limit(TOK, DAY, n, model)


def test_a_limit_parses_from_its_api_form_and_back() -> None:
    value = [
        {"measure": "tokens", "window": "day", "limit": 1000},
        {"measure": "requests", "window": "minute", "limit": 5, "model": "big"},
    ]
    allowance = parse_allowance(value)
    # Kept in a stable order: requests before tokens, minute before day.
    assert allowance == (rpm(5, "big"), tpd(1000))
    assert [limit.to_json() for limit in allowance or ()] == [
        {"measure": "requests", "window": "minute", "limit": 5, "model": "big"},
        {"measure": "tokens", "window": "day", "limit": 1000, "model": None},
    ]
    assert parse_allowance(None) is None
    assert parse_allowance([]) == UNLIMITED


@pytest.mark.parametrize(
    ("value", "param"),
    [
        ("lots", "allowance"),
        ({"measure": "tokens"}, "allowance"),
        (["tokens"], "allowance.0"),
        ([{"measure": "words", "window": "day", "limit": 1}], "allowance.0.measure"),
        ([{"measure": ["tokens"], "window": "day", "limit": 1}], "allowance.0.measure"),
        ([{"measure": "tokens", "window": "week", "limit": 1}], "allowance.0.window"),
        ([{"measure": "tokens", "window": {}, "limit": 1}], "allowance.0.window"),
        ([{"measure": "tokens", "window": "day", "limit": -1}], "allowance.0.limit"),
        ([{"measure": "tokens", "window": "day", "limit": 1.5}], "allowance.0.limit"),
        ([{"measure": "tokens", "window": "day", "limit": True}], "allowance.0.limit"),
        ([{"measure": "tokens", "window": "day", "limit": "5"}], "allowance.0.limit"),
        ([{"measure": "tokens", "window": "day", "limit": 10**16}], "allowance.0.limit"),
        ([{"measure": "tokens", "window": "day", "limit": 1, "model": ""}], "allowance.0.model"),
        ([{"measure": "tokens", "window": "day", "limit": 1, "model": 7}], "allowance.0.model"),
        ([{"measure": "tokens", "window": "day", "limit": 1, "per": "x"}], "allowance.0"),
        (
            [
                {"measure": "tokens", "window": "day", "limit": 1},
                {"measure": "tokens", "window": "day", "limit": 2, "model": None},
            ],
            "allowance.1",
        ),
        (
            [{"measure": "requests", "window": "minute", "limit": i} for i in range(101)],
            "allowance",
        ),
    ],
)
def test_anything_else_is_an_invalid_allowance_that_names_its_place(
    value: object, param: str
) -> None:
    with pytest.raises(InvalidAllowance) as caught:
        parse_allowance(value)
    assert caught.value.param == param


@pytest.mark.parametrize(
    ("groups", "expected"),
    [
        ([], UNLIMITED),  # no group: no limits
        ([None, None], UNLIMITED),  # groups with no say: still none
        ([(tpd(100),)], (tpd(100),)),
        ([(tpd(100),), None], (tpd(100),)),  # a group with no say takes nothing away
        ([(tpd(100),), (tpd(500),)], (tpd(500),)),  # the most generous
        ([(tpd(100),), ()], UNLIMITED),  # an explicitly unlimited group beats any limit
        # A limit one group does not set is no limit from it: joining never restricts more.
        ([(tpd(100), rpm(5)), (tpd(50),)], (tpd(100),)),
        ([(tpd(100),), (rpm(5),)], UNLIMITED),
        # Model limits are keys of their own.
        ([(tpd(100, "big"),), (tpd(300, "big"), tpd(10))], (tpd(300, "big"),)),
        (
            [(Limit(IN, MONTH, 7), Limit(OUT, MONTH, 9)), (Limit(IN, MONTH, 8),)],
            (Limit(IN, MONTH, 8),),
        ),
    ],
)
def test_the_inherited_allowance_is_the_most_generous_of_the_groups_with_a_say(
    groups: list[tuple[Limit, ...] | None], expected: tuple[Limit, ...]
) -> None:
    assert inherited_allowance(groups) == expected


@pytest.mark.parametrize(
    ("inherited", "is_admin", "expected"),
    [
        ((tpd(100),), False, (tpd(100),)),
        ((tpd(100),), True, UNLIMITED),  # an administrator may give a token anything
        (UNLIMITED, False, UNLIMITED),
    ],
)
def test_the_ceiling_is_the_inherited_allowance_or_none_for_administrators(
    inherited: tuple[Limit, ...], is_admin: bool, expected: tuple[Limit, ...]
) -> None:
    assert ceiling(inherited, is_admin) == expected


@pytest.mark.parametrize(
    ("requested", "top", "over"),
    [
        (None, (tpd(100),), []),  # inherit
        ((tpd(100),), (tpd(100),), []),  # equal is allowed
        ((tpd(50),), (tpd(100),), []),
        ((tpd(101),), (tpd(100),), [tpd(101)]),
        ((tpd(500), rpm(3)), (tpd(100), rpm(5)), [tpd(500)]),
        ((rpm(3),), (tpd(100),), []),  # unnamed: the owner's still applies
        ((tpd(10**6, "big"),), (tpd(100),), []),  # a model limit is another key
        ((tpd(10**6),), UNLIMITED, []),  # no ceiling: anything
        ((), (tpd(100),), []),  # "no limits of its own": the owner's apply
    ],
)
def test_a_token_may_only_lower_a_limit_of_its_ceiling(
    requested: tuple[Limit, ...] | None, top: tuple[Limit, ...], over: list[Limit]
) -> None:
    assert above_ceiling(requested, top) == over


@pytest.mark.parametrize(
    ("override", "by_admin", "inherited", "is_admin", "expected"),
    [
        (None, False, (tpd(100),), False, Resolution((tpd(100),), UNLIMITED)),
        # The owner's own: both apply, so it can only lower, even after groups shrank.
        ((tpd(50),), False, (tpd(100),), False, Resolution((tpd(100),), (tpd(50),))),
        ((tpd(500),), False, (tpd(100),), False, Resolution((tpd(100),), (tpd(500),))),
        # Another administrator's grant stands alone.
        ((tpd(500),), True, (tpd(100),), False, Resolution(UNLIMITED, (tpd(500),))),
        ((), True, (tpd(100),), False, Resolution(UNLIMITED, UNLIMITED)),
        # An administrator's own token: their ceiling is none, while they are one.
        ((tpd(500),), False, (tpd(100),), True, Resolution(UNLIMITED, (tpd(500),))),
    ],
)
def test_a_tokens_requests_are_counted_against_the_right_limits(
    override: tuple[Limit, ...] | None,
    by_admin: bool,
    inherited: tuple[Limit, ...],
    is_admin: bool,
    expected: Resolution,
) -> None:
    assert resolve_allowance(override, by_admin, inherited, is_admin) == expected


def test_the_effective_allowance_is_the_lower_of_person_and_token_on_each_limit() -> None:
    resolution = Resolution(person=(tpd(100), rpm(5)), token=(tpd(500), rpm(2, "big")))
    assert resolution.effective == (rpm(5), rpm(2, "big"), tpd(100))
    assert combined((tpd(100),), (tpd(20),)) == (tpd(20),)


def test_person_limits_count_on_the_person_and_token_limits_on_the_token() -> None:
    resolution = Resolution(person=(tpd(100),), token=(rpm(2),))
    assert counted(resolution, user_id=7, token_id=3) == (
        Counted("u7", tpd(100)),
        Counted("t3", rpm(2)),
    )
    assert counted(resolution, user_id=7, token_id=None) == (Counted("u7", tpd(100)),)


def test_a_limit_names_its_reason() -> None:
    assert tpd(1).reason == "tokens_per_day"
    assert Limit(OUT, MONTH, 1).reason == "output_tokens_per_month"
