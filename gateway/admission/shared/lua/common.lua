
local P = ARGV[1]
local ME = ARGV[2]
local TTL = tonumber(ARGV[3])
local t = redis.call('TIME')
local NOW = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local function alive(proc)
  local s = redis.call('ZSCORE', P .. 'procs', proc)
  return s and tonumber(s) >= NOW
end

local function purge(ref)
  local key = P .. 'w:' .. ref
  local fields = redis.call('HGETALL', key)
  local proc = nil
  for i = 1, #fields, 2 do
    local f = fields[i]
    if string.sub(f, 1, 1) == 'b' then
      redis.call('ZREM', P .. 'q:' .. string.sub(f, 2), fields[i + 1])
    elseif f == '_p' then
      proc = fields[i + 1]
    end
  end
  redis.call('DEL', key)
  redis.call('ZREM', P .. 'all', ref)
  if proc then redis.call('SREM', P .. 'pw:' .. proc, ref) end
end

-- A learned limit (max_inflight "auto") is one value for every process: the one its owner
-- posted (capacity.lua); a process's own figure counts only where none is posted.
local function cap_of(b, cap)
  local posted = redis.call('HGET', P .. 'cap:' .. b, 'limit')
  if posted then return tonumber(posted) end
  return cap
end

local function held(b)
  redis.call('ZREMRANGEBYSCORE', P .. 'l:' .. b, '-inf', NOW)
  return redis.call('ZCARD', P .. 'l:' .. b)
end

-- Hand each free slot of backend b to its best live waiter (at most once: the grant purges it).
local function dispatch(b, cap, out)
  if redis.call('EXISTS', P .. 'settling') == 1 then return end
  cap = cap_of(b, cap)
  local n = held(b)
  while n < cap do
    local head = redis.call('ZRANGE', P .. 'q:' .. b, 0, 0)[1]
    if not head then return end
    local bar = string.find(head, '|', 1, true)
    local ref = string.sub(head, bar + 1)
    local proc = redis.call('HGET', P .. 'w:' .. ref, '_p')
    if not proc then
      redis.call('ZREM', P .. 'q:' .. b, head)
    elseif not alive(proc) then
      purge(ref)
    else
      purge(ref)
      redis.call('ZADD', P .. 'l:' .. b, NOW + TTL, ref)
      n = n + 1
      if proc == ME then
        table.insert(out, ref)
        table.insert(out, b)
      else
        redis.call('HSET', P .. 'g:' .. proc, ref, b)
        redis.call('PUBLISH', P .. 'grant:' .. proc, ref)
      end
    end
  end
end
