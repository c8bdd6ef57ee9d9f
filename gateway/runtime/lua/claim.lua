
local held = redis.call('GET', KEYS[1])
if held and held ~= ARGV[1] then
  redis.call('SET', KEYS[1], '!', 'EX', ARGV[2])
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return 1
