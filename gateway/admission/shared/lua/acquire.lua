
if redis.call('EXISTS', P .. 'boot') == 0 then return {'reset'} end
if redis.call('EXISTS', P .. 'settling') == 1 then return {'busy'} end
local ref, strategy, affinity, rr = ARGV[4], ARGV[5], ARGV[6], tonumber(ARGV[7])
local n = tonumber(ARGV[8])
local free = {}
for i = 0, n - 1 do
  local b = ARGV[9 + 3 * i]
  local cap = cap_of(b, tonumber(ARGV[10 + 3 * i]))
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
