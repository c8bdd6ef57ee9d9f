
local g = redis.call('HGETALL', P .. 'g:' .. ME)
if #g > 0 then redis.call('DEL', P .. 'g:' .. ME) end
return g
