
local b = ARGV[5]
redis.call('ZREM', P .. 'l:' .. b, ARGV[4])
local out = {}
if ARGV[7] == '1' then dispatch(b, tonumber(ARGV[6]), out) end
return out
