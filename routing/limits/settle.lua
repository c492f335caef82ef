-- Settlement of one request after its response (or failure, or the client's disconnect).
--
-- KEYS: 1 tenant available  2 tenant holds hash  3 tenant's hold expiries zset  4 key month spend
--       5 key concurrency zset  6 tenant concurrency zset  7 key rate window  8 tenant rate window
-- ARGV: 1 hold id  2 hold micros  3 actual charge micros  4 hold member  5 lease id
--       6 token correction (actual - reserved)  7 month spend ttl seconds
-- Returns 1 if this call settled the hold, 0 if it was already gone.
--
-- Races prevented:
-- * double release: metering's hold reaper and this settlement racing on an expired
--   hold. Only the caller whose HDEL returns 1 gives the hold back (INCRBY avail), so
--   the hold is returned exactly once whoever wins;
-- * a reaped hold settled again would credit the tenant twice — ZREM of the expiry
--   happens only together with the HDEL that won;
-- * a lease or a token reservation leaked when the process settling it crashed
--   halfway (they are released in the same atomic step).
local hold = tonumber(ARGV[2])
local charge = tonumber(ARGV[3])
local settled = 0
if hold > 0 and redis.call('HDEL', KEYS[2], ARGV[1]) == 1 then
  redis.call('INCRBY', KEYS[1], hold - charge)
  redis.call('ZREM', KEYS[3], ARGV[4])
  settled = 1
end
if charge > 0 then
  redis.call('INCRBY', KEYS[4], charge)
  redis.call('EXPIRE', KEYS[4], tonumber(ARGV[7]))
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
