
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
