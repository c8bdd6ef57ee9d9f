"""The Lua scripts of shared admission: every change of the shared line is one of these.

Keys, under a prefix P (default ``aiplane:``):

    P boot            who (re)started this Redis's state: a change means Redis lost it
    P settling        set for a moment after a reset: nothing is granted while processes rebuild
    P procs           zset: live process -> liveness expiry (ms, Redis time)
    P seats           hash: live process -> its seat (a number no other live process holds)
    P renewed         hash: live process -> the number of its last renewal (P renewals)
    P joined          hash: live process -> the number of its first renewal with its seat
    P renewals        counter of renewals: orders them strictly (two in one ms stay ordered)
    P l:<backend>     zset: slot lease (the waiter's ref) -> lease expiry (ms, Redis time)
    P q:<backend>     zset, every score 0: the waiters that backend may serve, ordered by member;
                      member = the order key, encoded to sort as bytes, then "|" and the ref
    P w:<ref>         hash: _p process, _c class, _i what the live page shows,
                      b<backend> -> its member in P q:<backend>
    P all             zset: every waiting ref -> its class (the shared depth)
    P pw:<process>    set: that process's waiting refs (reaped with it when it dies)
    P g:<process>     hash: ref -> backend, grants to that process it has not taken yet
    P cap:<backend>   hash: a learned limit (max_inflight "auto") as its owner posted it, with
                      why and the engine's gauges; while it is there the scripts take its limit
                      for that backend rather than the caller's (capacity_board.py)
    P co:<backend>    the process that owns that backend's learned limit (expires unless posted)
    channel P grant:<process>   "take your grants"

Time is Redis's own (TIME), so processes on hosts with different clocks agree on leases.

The text of each script is `lua/common.lua` followed by its own file, read at import byte for
byte: Redis names a script by the SHA1 of that text, and the processes sharing a prefix must run
the same one (tests/gateway/admission/test_lua_scripts.py pins them).
"""

from __future__ import annotations

from gateway.core.lua import script

_COMMON = script(__file__, "common")

# ARGV: P ME TTL ref strategy affinity rr n [backend cap weight]*n
# -> {'now', backend} | {'wait', backend} (free but others wait for it) | {'busy'} | {'reset'}
ACQUIRE = _COMMON + script(__file__, "acquire")

# ARGV: P ME TTL ref mode cls info dispatch n [backend cap member]*n
# mode: new (not listed yet) | again (replace its listing, if it still has one) | rebuild (list it
# whatever Redis still knows of it: after Redis lost its state, or back from an outage)
# -> flat grants to ME {ref, backend, ...}, or {'reset'}
INDEX = _COMMON + script(__file__, "index")

# ARGV: P ME TTL ref n [backend cap]*n  -> grants to ME (a grant it gives back goes on)
CANCEL = _COMMON + script(__file__, "cancel")

# ARGV: P ME TTL ref backend cap usable  -> grants to ME
RELEASE = _COMMON + script(__file__, "release")

# ARGV: P ME TTL n [backend cap]*n  -> grants to ME
PASS = _COMMON + script(__file__, "pass")

# ARGV: P ME TTL  -> grants to ME that other processes made
TAKE = _COMMON + script(__file__, "take")

# ARGV: P ME TTL proc_ttl boot_seen settle_ms force seat n [backend ref]*n
# -> {boot, processes, seat, reset, revived, lost, counted}: seat = ME's number among the live
# processes, kept for its life (the one it asks for, after a restart emptied Redis, if nobody
# took it), so two live processes never hold the same one, however stale their views; reset = 1
# when Redis lost the shared state since boot_seen (or `force`: a process back from an outage,
# whose leases may have lapsed, lists them again); revived = 1 when ME had been given up for
# dead (its waiters were dropped); lost = the refs of its leases that had lapsed and were gone,
# listed again now; counted = 1 once every other live process has renewed since ME joined.
RENEW = _COMMON + script(__file__, "renew")

# ARGV: P ME TTL owner_ms n [backend limit reason mode running waiting kv error]*n
# -> per backend {backend, leads, held, waiting, limit, reason, mode, running, waiting, kv, error}
# (capacity_board.py): the posted limit is ME's if ME owns it (or no live process did), else
# the owner's
CAPACITY = _COMMON + script(__file__, "capacity")

# ARGV: P ME TTL limit n [backend]*n -> {depth_low, depth_medium, depth_high, inflight..., waiters}
STATS = _COMMON + script(__file__, "stats")
