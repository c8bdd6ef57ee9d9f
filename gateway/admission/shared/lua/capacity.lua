
-- Each backend's learned limit, one value for every process: its owner (the first to post,
-- for as long as it keeps posting and stays alive) writes it; everyone reads it back, with
-- what the whole group holds and waits there. A limit of 0: the backend is no longer learned
-- here, and its posted limit goes, so the configured one counts at once.
local own = tonumber(ARGV[4])
local n = tonumber(ARGV[5])
local FIELDS = {'limit', 'reason', 'mode', 'running', 'waiting', 'kv', 'error'}
local out = {}
for i = 0, n - 1 do
  local at = 6 + 8 * i
  local b, limit = ARGV[at], tonumber(ARGV[at + 1])
  local posted, owner = P .. 'cap:' .. b, P .. 'co:' .. b
  if limit == 0 then
    redis.call('DEL', posted, owner)
  else
    local who = redis.call('GET', owner)
    local leads = (not who) or who == ME or not alive(who)
    if leads then
      redis.call('SET', owner, ME, 'PX', own)
      local fields = {}
      for j, f in ipairs(FIELDS) do
        table.insert(fields, f)
        table.insert(fields, ARGV[at + j])
      end
      redis.call('HSET', posted, unpack(fields))
      redis.call('PEXPIRE', posted, own)
    end
    local row = {b, leads and 1 or 0, held(b), redis.call('ZCARD', P .. 'q:' .. b)}
    local values = redis.call('HMGET', posted, unpack(FIELDS))
    for j = 1, #FIELDS do table.insert(row, values[j] or '') end
    table.insert(out, row)
  end
end
return out
