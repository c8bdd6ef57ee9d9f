
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
