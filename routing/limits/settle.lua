-- Settlement of one request after its response (or failure, or the client's disconnect).
--
-- KEYS: 1 tenant available  2 tenant holds hash  3 tenant's hold expiries zset  4 key month spend
--       5 key concurrency zset  6 tenant concurrency zset  7 key rate window  8 tenant rate window
--       9 tenant month spend  10 held by open holds (hash)  11 hold -> key id (hash)
-- ARGV: 1 hold id  2 hold micros  3 actual charge micros  4 hold member  5 lease id
--       6 token correction (actual - reserved)  7 month spend ttl seconds  8 the key's field in KEYS[10]
-- Returns 1 if this call settled the hold, 0 if it was already gone.
--
-- Races prevented:
-- * double release: metering's hold reaper and this settlement racing on an expired
--   hold. Only the caller whose HDEL returns 1 gives the hold back (INCRBY avail), so
--   the hold is returned exactly once whoever wins;
-- * a reaped hold settled again would credit the tenant twice — ZREM of the expiry
--   happens only together with the HDEL that won; the same HDEL decides who takes the hold off
--   the monthly limits' held counters (KEYS[10]), so they are given back once too;
-- * a charge counted neither as held nor as spent for a moment (another admission slipping past
--   the budget in between): the hold leaves the held counters in the step that adds the charge;
-- * a lease or a token reservation leaked when the process settling it crashed
--   halfway (they are released in the same atomic step).
local hold = tonumber(ARGV[2])
local charge = tonumber(ARGV[3])
local settled = 0
-- Off the held counters, only for a hold admission counted there (it has its entry in KEYS[11]).
local function unhold(name)
  if redis.call('HINCRBY', KEYS[10], name, -hold) <= 0 then redis.call('HDEL', KEYS[10], name) end
end
if hold > 0 and redis.call('HDEL', KEYS[2], ARGV[1]) == 1 then
  redis.call('INCRBY', KEYS[1], hold - charge)
  redis.call('ZREM', KEYS[3], ARGV[4])
  if redis.call('HDEL', KEYS[11], ARGV[1]) == 1 then
    unhold(ARGV[8])
    unhold('tenant')
  end
  settled = 1
end
if charge > 0 then
  for _, spend in ipairs({KEYS[4], KEYS[9]}) do
    redis.call('INCRBY', spend, charge)
    redis.call('EXPIRE', spend, tonumber(ARGV[7]))
  end
end
redis.call('ZREM', KEYS[5], ARGV[5])
redis.call('ZREM', KEYS[6], ARGV[5])
local correction = tonumber(ARGV[6])
if correction ~= 0 then
  for i = 7, 8 do
    if redis.call('EXISTS', KEYS[i]) == 1 then redis.call('HINCRBY', KEYS[i], 't', correction) end
  end
end
return settled
