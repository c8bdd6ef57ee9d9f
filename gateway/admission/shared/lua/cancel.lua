
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
