
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
