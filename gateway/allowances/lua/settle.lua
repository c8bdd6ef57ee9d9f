
local now, ticket = tonumber(ARGV[1]), ARGV[2]
for i = 1, #KEYS / 2 do
  local h, z, a = KEYS[2 * i - 1], KEYS[2 * i], 2 + (i - 1) * 4
  local window, ends = ARGV[a + 1], tonumber(ARGV[a + 2])
  local reserved, add = tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4])
  local v = redis.call('HMGET', h, 'w', 'u', 'r')
  local used, held = tonumber(v[2]) or 0, tonumber(v[3]) or 0
  if v[1] ~= window then used = 0 end
  if reserved > 0 and redis.call('ZREM', z, ticket .. ':' .. reserved) == 1 then
    held = held - reserved
    if held < 0 then held = 0 end
  end
  redis.call('HSET', h, 'w', window, 'u', used + add, 'r', held)
  local ttl, current = ends - now, redis.call('PTTL', h)
  if current < 0 or current < ttl then redis.call('PEXPIRE', h, math.max(1, ttl)) end
end
return 1
