
local out = {}
local n = tonumber(ARGV[4])
for i = 0, n - 1 do dispatch(ARGV[5 + 2 * i], tonumber(ARGV[6 + 2 * i]), out) end
return out
