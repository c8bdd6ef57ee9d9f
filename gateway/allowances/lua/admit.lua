
local now, hold, ticket = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local n = #KEYS / 2
local state, refused = {}, {}
for i = 1, n do
  local h, z, a = KEYS[2 * i - 1], KEYS[2 * i], 3 + (i - 1) * 5
  local window, cap, need = ARGV[a + 1], tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4])
  local v = redis.call('HMGET', h, 'w', 'u', 'r')
  local used, reserved = tonumber(v[2]) or 0, tonumber(v[3]) or 0
  if v[1] ~= window then used = 0 end
  local stale = redis.call('ZRANGEBYSCORE', z, '-inf', now)
  if #stale > 0 then
    for _, m in ipairs(stale) do
      reserved = reserved - tonumber(string.match(m, ':(%d+)$'))
    end
    redis.call('ZREMRANGEBYSCORE', z, '-inf', now)
    if reserved < 0 then reserved = 0 end
  end
  state[i] = {used, reserved}
  local left = cap - used - reserved
  if left <= 0 or need > left then
    refused[#refused + 1] = i
    refused[#refused + 1] = left
  end
end
local out = {1}
for i = 1, n do
  local h, z, a = KEYS[2 * i - 1], KEYS[2 * i], 3 + (i - 1) * 5
  local window, ends, cap = ARGV[a + 1], tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
  local need, kind = tonumber(ARGV[a + 4]), ARGV[a + 5]
  local used, reserved = state[i][1], state[i][2]
  if #refused == 0 then
    if kind == '0' then
      used = used + 1
    elseif need > 0 then
      reserved = reserved + need
      redis.call('ZADD', z, hold, ticket .. ':' .. need)
      redis.call('PEXPIRE', z, hold - now)
    end
    out[#out + 1] = cap - used - reserved
  end
  redis.call('HSET', h, 'w', window, 'u', used, 'r', reserved)
  local ttl = ends - now
  if reserved > 0 and hold - now > ttl then ttl = hold - now end
  local current = redis.call('PTTL', h)
  if current < 0 or current < ttl then redis.call('PEXPIRE', h, math.max(1, ttl)) end
end
if #refused > 0 then
  table.insert(refused, 1, 0)
  return refused
end
return out
