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
    channel P grant:<process>   "take your grants"

Time is Redis's own (TIME), so processes on hosts with different clocks agree on leases.
"""

from __future__ import annotations

_COMMON = """
local P = ARGV[1]
local ME = ARGV[2]
local TTL = tonumber(ARGV[3])
local t = redis.call('TIME')
local NOW = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local function alive(proc)
  local s = redis.call('ZSCORE', P .. 'procs', proc)
  return s and tonumber(s) >= NOW
end

local function purge(ref)
  local key = P .. 'w:' .. ref
  local fields = redis.call('HGETALL', key)
  local proc = nil
  for i = 1, #fields, 2 do
    local f = fields[i]
    if string.sub(f, 1, 1) == 'b' then
      redis.call('ZREM', P .. 'q:' .. string.sub(f, 2), fields[i + 1])
    elseif f == '_p' then
      proc = fields[i + 1]
    end
  end
  redis.call('DEL', key)
  redis.call('ZREM', P .. 'all', ref)
  if proc then redis.call('SREM', P .. 'pw:' .. proc, ref) end
end

local function held(b)
  redis.call('ZREMRANGEBYSCORE', P .. 'l:' .. b, '-inf', NOW)
  return redis.call('ZCARD', P .. 'l:' .. b)
end

-- Hand each free slot of backend b to its best live waiter (at most once: the grant purges it).
local function dispatch(b, cap, out)
  if redis.call('EXISTS', P .. 'settling') == 1 then return end
  local n = held(b)
  while n < cap do
    local head = redis.call('ZRANGE', P .. 'q:' .. b, 0, 0)[1]
    if not head then return end
    local bar = string.find(head, '|', 1, true)
    local ref = string.sub(head, bar + 1)
    local proc = redis.call('HGET', P .. 'w:' .. ref, '_p')
    if not proc then
      redis.call('ZREM', P .. 'q:' .. b, head)
    elseif not alive(proc) then
      purge(ref)
    else
      purge(ref)
      redis.call('ZADD', P .. 'l:' .. b, NOW + TTL, ref)
      n = n + 1
      if proc == ME then
        table.insert(out, ref)
        table.insert(out, b)
      else
        redis.call('HSET', P .. 'g:' .. proc, ref, b)
        redis.call('PUBLISH', P .. 'grant:' .. proc, ref)
      end
    end
  end
end
"""

# ARGV: P ME TTL ref strategy affinity rr n [backend cap weight]*n
# -> {'now', backend} | {'wait', backend} (free but others wait for it) | {'busy'} | {'reset'}
ACQUIRE = (
    _COMMON
    + """
if redis.call('EXISTS', P .. 'boot') == 0 then return {'reset'} end
if redis.call('EXISTS', P .. 'settling') == 1 then return {'busy'} end
local ref, strategy, affinity, rr = ARGV[4], ARGV[5], ARGV[6], tonumber(ARGV[7])
local n = tonumber(ARGV[8])
local free = {}
for i = 0, n - 1 do
  local b = ARGV[9 + 3 * i]
  local cap = tonumber(ARGV[10 + 3 * i])
  local weight = tonumber(ARGV[11 + 3 * i])
  local c = held(b)
  if c < cap then table.insert(free, {b, c / (cap * weight)}) end
end
if #free == 0 then return {'busy'} end
local chosen = nil
if #free == 1 then chosen = free[1][1] end
if not chosen and strategy == 'prefix_affinity' and affinity ~= '' then
  for _, f in ipairs(free) do if f[1] == affinity then chosen = f[1] end end
end
if not chosen and strategy == 'round_robin' then chosen = free[(rr % #free) + 1][1] end
if not chosen then
  local best = nil
  for _, f in ipairs(free) do
    if best == nil or f[2] < best[2] then best = f end
  end
  chosen = best[1]
end
if redis.call('ZCARD', P .. 'q:' .. chosen) > 0 then return {'wait', chosen} end
redis.call('ZADD', P .. 'l:' .. chosen, NOW + TTL, ref)
return {'now', chosen}
"""
)

# ARGV: P ME TTL ref mode cls info dispatch n [backend cap member]*n
# mode: new (not listed yet) | again (replace its listing, if it still has one) | rebuild (list it
# whatever Redis still knows of it: after Redis lost its state, or back from an outage)
# -> flat grants to ME {ref, backend, ...}, or {'reset'}
INDEX = (
    _COMMON
    + """
if redis.call('EXISTS', P .. 'boot') == 0 then return {'reset'} end
local ref, mode, cls, info = ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local key = P .. 'w:' .. ref
if redis.call('EXISTS', key) == 1 then
  purge(ref)
elseif mode ~= 'new' then
  local g = redis.call('HGET', P .. 'g:' .. ME, ref)
  if g then
    redis.call('HDEL', P .. 'g:' .. ME, ref)
    return {ref, g}
  end
  -- Neither listed nor granted and untaken: a grant to ME was just made (its answer is on its
  -- way or already taken). Listing it again would admit it twice.
  if mode == 'again' then return {} end
end
local n = tonumber(ARGV[9])
redis.call('HSET', key, '_p', ME, '_c', cls, '_i', info)
for i = 0, n - 1 do
  local b, member = ARGV[10 + 3 * i], ARGV[12 + 3 * i]
  redis.call('HSET', key, 'b' .. b, member)
  redis.call('ZADD', P .. 'q:' .. b, 0, member)
end
redis.call('ZADD', P .. 'all', tonumber(cls), ref)
redis.call('SADD', P .. 'pw:' .. ME, ref)
local out = {}
if ARGV[8] == '1' then
  for i = 0, n - 1 do dispatch(ARGV[10 + 3 * i], tonumber(ARGV[11 + 3 * i]), out) end
end
return out
"""
)

# ARGV: P ME TTL ref n [backend cap]*n  -> grants to ME (a grant it gives back goes on)
CANCEL = (
    _COMMON
    + """
local ref = ARGV[4]
if redis.call('EXISTS', P .. 'w:' .. ref) == 1 then
  purge(ref)
  return {}
end
local g = redis.call('HGET', P .. 'g:' .. ME, ref)
local out = {}
if g then
  redis.call('HDEL', P .. 'g:' .. ME, ref)
  redis.call('ZREM', P .. 'l:' .. g, ref)
  local n = tonumber(ARGV[5])
  for i = 0, n - 1 do
    if ARGV[6 + 2 * i] == g then dispatch(g, tonumber(ARGV[7 + 2 * i]), out) end
  end
end
return out
"""
)

# ARGV: P ME TTL ref backend cap usable  -> grants to ME
RELEASE = (
    _COMMON
    + """
local b = ARGV[5]
redis.call('ZREM', P .. 'l:' .. b, ARGV[4])
local out = {}
if ARGV[7] == '1' then dispatch(b, tonumber(ARGV[6]), out) end
return out
"""
)

# ARGV: P ME TTL n [backend cap]*n  -> grants to ME
PASS = (
    _COMMON
    + """
local out = {}
local n = tonumber(ARGV[4])
for i = 0, n - 1 do dispatch(ARGV[5 + 2 * i], tonumber(ARGV[6 + 2 * i]), out) end
return out
"""
)

# ARGV: P ME TTL  -> grants to ME that other processes made
TAKE = (
    _COMMON
    + """
local g = redis.call('HGETALL', P .. 'g:' .. ME)
if #g > 0 then redis.call('DEL', P .. 'g:' .. ME) end
return g
"""
)

# ARGV: P ME TTL proc_ttl boot_seen settle_ms force seat n [backend ref]*n
# -> {boot, processes, seat, reset, revived, lost, counted}: seat = ME's number among the live
# processes, kept for its life (the one it asks for, after a restart emptied Redis, if nobody
# took it), so two live processes never hold the same one, however stale their views; reset = 1
# when Redis lost the shared state since boot_seen (or `force`: a process back from an outage,
# whose leases may have lapsed, lists them again); revived = 1 when ME had been given up for
# dead (its waiters were dropped); lost = the refs of its leases that had lapsed and were gone,
# listed again now; counted = 1 once every other live process has renewed since ME joined.
RENEW = (
    _COMMON
    + """
local proc_ttl, seen, settle = tonumber(ARGV[4]), ARGV[5], tonumber(ARGV[6])
local force = ARGV[7] == '1'
local asked = tonumber(ARGV[8])
local boot = redis.call('GET', P .. 'boot')
local reset = 0
if not boot then
  boot = tostring(NOW) .. ':' .. ME
  redis.call('SET', P .. 'boot', boot)
  -- Not a first start: this process knew Redis before, or it admitted alone in an outage
  -- (force). Either way others may run requests Redis no longer knows: grant nothing until
  -- they have listed them.
  if seen ~= '' or force then
    redis.call('SET', P .. 'settling', '1', 'PX', settle)
  end
end
local restarted = boot ~= seen
if restarted or force then reset = 1 end
-- Given up for dead while it said nothing (a stalled loop): its waiters were dropped.
local revived = 0
if not restarted and not alive(ME) then revived = 1 end
redis.call('ZADD', P .. 'procs', NOW + proc_ttl, ME)
local dead = redis.call('ZRANGEBYSCORE', P .. 'procs', '-inf', '(' .. NOW)
for _, d in ipairs(dead) do
  for _, ref in ipairs(redis.call('SMEMBERS', P .. 'pw:' .. d)) do purge(ref) end
  redis.call('DEL', P .. 'pw:' .. d, P .. 'g:' .. d)
  redis.call('ZREM', P .. 'procs', d)
  redis.call('HDEL', P .. 'seats', d)
  redis.call('HDEL', P .. 'renewed', d)
  redis.call('HDEL', P .. 'joined', d)
end
-- Renewals are ordered by a counter, not the clock: a join and another's renewal in the same
-- millisecond would look simultaneous, and the renewal taken for one that counts the newcomer.
local turn = redis.call('INCR', P .. 'renewals')
local seat = tonumber(redis.call('HGET', P .. 'seats', ME))
if not seat then
  local taken = {}
  for _, s in ipairs(redis.call('HVALS', P .. 'seats')) do taken[tonumber(s)] = true end
  seat = asked
  if seat < 0 or taken[seat] then
    seat = 0
    while taken[seat] do seat = seat + 1 end
  end
  redis.call('HSET', P .. 'seats', ME, seat)
  redis.call('HSET', P .. 'joined', ME, turn)
end
redis.call('HSET', P .. 'renewed', ME, turn)
-- Counted by all: every other live process has renewed since ME joined, so their shares too
-- were taken from views that count it.
local joined = tonumber(redis.call('HGET', P .. 'joined', ME))
local counted = 1
for _, other in ipairs(redis.call('ZRANGE', P .. 'procs', 0, -1)) do
  local renewed = tonumber(redis.call('HGET', P .. 'renewed', other))
  if other ~= ME and (not renewed or renewed < joined) then counted = 0 end
end
-- Every running request is listed, even where the backend now looks full: it runs on the
-- engine all the same, and counting it keeps anything more from being granted there until
-- enough have ended. A lease gone from a Redis that kept its state had lapsed: it is lost
-- (its slot may have gone to another request meanwhile).
local lost = {}
local n = tonumber(ARGV[9])
for i = 0, n - 1 do
  local b, ref = ARGV[10 + 2 * i], ARGV[11 + 2 * i]
  if not restarted and not redis.call('ZSCORE', P .. 'l:' .. b, ref) then
    table.insert(lost, ref)
  end
  redis.call('ZADD', P .. 'l:' .. b, NOW + TTL, ref)
end
return {boot, redis.call('ZCARD', P .. 'procs'), seat, reset, revived, lost, counted}
"""
)

# ARGV: P ME TTL limit n [backend]*n -> {depth_low, depth_medium, depth_high, inflight..., waiters}
STATS = (
    _COMMON
    + """
local out = {}
for c = 0, 2 do table.insert(out, redis.call('ZCOUNT', P .. 'all', c, c)) end
local limit, n = tonumber(ARGV[4]), tonumber(ARGV[5])
for i = 0, n - 1 do
  table.insert(out, redis.call('ZCOUNT', P .. 'l:' .. ARGV[6 + i], NOW, '+inf'))
end
local refs = {}
if limit > 0 then refs = redis.call('ZRANGE', P .. 'all', 0, limit - 1) end
for _, ref in ipairs(refs) do
  local v = redis.call('HMGET', P .. 'w:' .. ref, '_p', '_i')
  if v[1] then
    table.insert(out, ref)
    table.insert(out, v[1])
    table.insert(out, v[2])
  end
end
return out
"""
)
