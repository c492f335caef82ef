-- Spend one hedge of a tenant's budget, atomically: at most share x requests + burst in a minute.
--
-- KEYS: 1 the tenant's rate window of this minute (hash, field r: requests admitted; admission.lua)
--       2 the tenant's hedges of this minute
-- ARGV: 1 share (0.05 = 5% extra requests)  2 burst (hedges allowed beyond the share)
-- Returns 1 spent, 0 budget exhausted (nothing written).
-- Race prevented: two gateways both reading "4 of 5 used" and both hedging.
local requests = tonumber(redis.call('HGET', KEYS[1], 'r') or '0')
local used = tonumber(redis.call('GET', KEYS[2]) or '0')
if used + 1 > requests * tonumber(ARGV[1]) + tonumber(ARGV[2]) then return 0 end
redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], 120)
return 1
