"""State a native backend keeps for the Responses API, tied to the caller who created it.

Every engine is called with one backend key, so an engine's store of responses, conversations
and items is shared by all of the gateway's callers: whoever knows an id could continue another
caller's conversation and read it. The gateway therefore keeps its own record of who created each
stored id, and on which backend:

- a backend keeps Responses state only when its operator chose so (`store_responses`); on any
  other backend a request that needs state is refused (400) as on a translated backend, and
  `store` is sent as false, so the engine keeps nothing for anyone;
- every response, conversation and output item id a keeping backend returns is *claimed* for
  the caller (user and token) before the client can see it; an id two claims disagree on (two
  engines counting alike, an engine restarted) belongs to nobody from then on;
- a request that refers to stored state (`previous_response_id`, `conversation`, an
  `item_reference`) is admitted only when every id is the caller's, and runs on the backend that
  holds it; an id that is not the caller's answers exactly as an unknown one (404), before the
  request waits for anything.

Claims live in this process (`MemoryOwners`) and, with AIPLANE_REDIS_URL, in Redis for every
process (gateway/runtime/state_owners.py).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Awaitable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from gateway.core.errors import BadRequest, GatewayError, Unavailable
from gateway.core.outcomes import Outcome

RESPONSE, CONVERSATION, ITEM = "response", "conversation", "item"
CLAIM_SECS = 30 * 24 * 3600.0  # a claim outlives any engine's store of it
MEMORY_CLAIMS = 200_000  # kept in one process; the oldest is forgotten first
MAX_ID = 200  # an id longer than this is nobody's (and is not echoed whole)


class StateNotFound(GatewayError):
    """Stored state that is unknown, or not the caller's: the two answer alike."""

    status, type_ = 404, "invalid_request_error"
    outcome = Outcome.REFUSED

    def __init__(self, kind: str, ident: str, param: str) -> None:
        shown = ident if len(ident) <= 64 else ident[:63] + "…"
        what = {RESPONSE: "Previous response", CONVERSATION: "Conversation", ITEM: "Item"}[kind]
        code = {
            RESPONSE: "previous_response_not_found",
            CONVERSATION: "conversation_not_found",
            ITEM: "item_not_found",
        }[kind]
        super().__init__(f"{what} with id '{shown}' not found.", code=code, param=param)


class OwnersAway(Unavailable):
    """Who owns stored state cannot be told right now (Redis away): try again."""

    code = "state_owners_unavailable"


@dataclass(frozen=True, slots=True)
class Claim:
    """Who created a stored id, and which backend holds it."""

    owner: str
    backend: str

    def encode(self) -> str:
        return f"{self.backend}\n{self.owner}"

    @classmethod
    def decode(cls, text: str) -> Claim | None:
        backend, sep, owner = text.partition("\n")
        return cls(owner, backend) if sep else None  # "!" (claimed twice) is nobody's


def owner_of(user_id: int | None, token_id: int | None) -> str:
    """The owner of state a request creates: its person and the token it came with."""
    return f"{user_id if user_id is not None else '-'}:{token_id if token_id is not None else '-'}"


class Owners(Protocol):
    """Where claims are kept: this process's memory, or Redis for every process."""

    def claim(self, kind: str, ident: str, claim: Claim) -> Awaitable[None] | None:
        """Record `claim`; an awaitable when it must be waited for before the id is shown."""

    async def find(self, kind: str, ident: str) -> Claim | None:
        """The claim on an id; None when unknown or claimed by two."""

    async def aclose(self) -> None:
        """Claims still on their way are sent first."""


class MemoryOwners:
    """Claims kept by this process alone, bounded: the oldest is forgotten first."""

    def __init__(self, limit: int = MEMORY_CLAIMS, clock: Any = time.monotonic) -> None:
        self.limit = limit
        self.clock = clock
        self._claims: OrderedDict[tuple[str, str], tuple[Claim | None, float]] = OrderedDict()

    def claim(self, kind: str, ident: str, claim: Claim) -> None:
        key = (kind, ident)
        held = self._claims.pop(key, None)
        now = self.clock()
        if held is not None and held[1] > now and held[0] != claim:
            claim_or_none: Claim | None = None  # two disagree: nobody's
        else:
            claim_or_none = claim
        self._claims[key] = (claim_or_none, now + CLAIM_SECS)
        while len(self._claims) > self.limit:
            self._claims.popitem(last=False)

    async def find(self, kind: str, ident: str) -> Claim | None:
        return self.find_now(kind, ident)

    def find_now(self, kind: str, ident: str) -> Claim | None:
        held = self._claims.get((kind, ident))
        if held is None or held[1] <= self.clock():
            return None
        return held[0]

    async def aclose(self) -> None:
        return None

    def known(self, kind: str, ident: str) -> bool:
        """Whether this process holds a claim (kept or disowned) on the id."""
        held = self._claims.get((kind, ident))
        return held is not None and held[1] > self.clock()


# ----- what a request refers to, and what an answer creates ----------------------------------


def references(body: dict[str, Any]) -> list[tuple[str, str, str]]:
    """The stored state a Responses request refers to: (kind, id, param) each."""
    refs: list[tuple[str, str, str]] = []
    previous = body.get("previous_response_id")
    if isinstance(previous, str) and previous:
        refs.append((RESPONSE, previous, "previous_response_id"))
    conversation = body.get("conversation")
    if isinstance(conversation, dict):
        ident = conversation.get("id")
        if isinstance(ident, str) and ident:
            refs.append((CONVERSATION, ident, "conversation.id"))
    elif isinstance(conversation, str) and conversation:
        refs.append((CONVERSATION, conversation, "conversation"))
    items = body.get("input")
    if isinstance(items, list):
        for i, item in enumerate(items):
            if isinstance(item, dict) and is_reference(item):
                ident = item.get("id")
                refs.append((ITEM, ident if isinstance(ident, str) else "", f"input[{i}].id"))
    return refs


def is_reference(item: dict[str, Any]) -> bool:
    """An input item that names a stored item instead of carrying it."""
    return item.get("type") == "item_reference" or (
        item.get("type") is None and "role" not in item and "id" in item
    )


def needs_store(body: dict[str, Any]) -> bool:
    """Whether the request asks the backend to keep what it answers."""
    return body.get("store") is True or body.get("background") is True


def created_ids(response: object) -> Iterator[tuple[str, str]]:
    """The stored ids a Response object names: its own, its conversation's, its items'."""
    if not isinstance(response, dict):
        return
    ident = response.get("id")
    if isinstance(ident, str) and ident:
        yield RESPONSE, ident
    conversation = response.get("conversation")
    conv_id = conversation.get("id") if isinstance(conversation, dict) else conversation
    if isinstance(conv_id, str) and conv_id:
        yield CONVERSATION, conv_id
    output = response.get("output")
    if isinstance(output, list):
        for item in output:
            item_id = item.get("id") if isinstance(item, dict) else None
            if isinstance(item_id, str) and item_id:
                yield ITEM, item_id


# ----- one request's part ------------------------------------------------------------------


@dataclass(slots=True)
class RequestState:
    """One Responses request's stored state: whose it is, where it must run, what it created."""

    owners: Owners
    owner: str
    pinned: str | None = None  # the backend holding the state it refers to
    pending: list[Awaitable[None]] = field(default_factory=list)

    def created(self, ids: Iterable[tuple[str, str]], backend: str) -> None:
        """Claim what a keeping backend answered, for this request's caller."""
        claim = Claim(self.owner, backend)
        for kind, ident in ids:
            if len(ident) <= MAX_ID:
                waiting = self.owners.claim(kind, ident, claim)
                if waiting is not None:
                    self.pending.append(waiting)

    async def settle(self) -> None:
        """Wait for the claims made so far to be kept: before the client sees their ids."""
        pending, self.pending = self.pending, []
        for waiting in pending:
            await waiting


async def admit(
    body: dict[str, Any],
    route_backends: Iterable[str],
    keeping: frozenset[str],
    state: RequestState,
) -> frozenset[str]:
    """Check what a request refers to and say where it may run: the backends to exclude.

    `route_backends` are all the backends of its route, `keeping` those of them that keep
    Responses state. Raises StateNotFound for an id that is not the caller's or is unknown.
    """
    refs = references(body)
    names = frozenset(route_backends)
    if not refs:
        return names - keeping if needs_store(body) else frozenset()
    where: set[str] = set()
    for kind, ident, param in refs:
        claim = await state.owners.find(kind, ident) if 0 < len(ident) <= MAX_ID else None
        if claim is None or claim.owner != state.owner or claim.backend not in keeping:
            raise StateNotFound(kind, ident, param)
        where.add(claim.backend)
    if len(where) > 1:
        raise BadRequest(
            "The stored state this request refers to is kept on different backends "
            f"({', '.join(sorted(where))}); continue one conversation at a time.",
            param=refs[-1][2],
        )
    (state.pinned,) = where
    return names - where
