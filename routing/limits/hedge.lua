-- Spend one hedge of a tenant's budget, atomically: hedges in the last 60 s at most share x the
-- tenant's requests in the last 60 s + burst.
--
-- KEYS: 1 the tenant's rate window of this minute (hash, field r: requests admitted; admission.lua)
--       2 the tenant's hedges of this minute   3 its rate window of the previous minute
--       4 its hedges of the previous minute
-- ARGV: 1 share (0.05 = 5% extra requests)  2 burst (hedges allowed beyond the share)  3 now
-- Returns 1 spent, 0 budget exhausted (nothing written).
--
-- Sliding, as admission's RPM: each count is this minute's plus the previous minute's weighted by
-- the share of it still inside the last 60 s, so a budget spent at 12:00:59 is not new at 12:01:00.
-- Race prevented: two gateways both reading "4 of 5 used" and both hedging.
local carried = 1 - (tonumber(ARGV[3]) % 60) / 60
local function sliding(current, previous)
  return tonumber(current or '0') + tonumber(previous or '0') * carried
end
local requests = sliding(redis.call('HGET', KEYS[1], 'r'), redis.call('HGET', KEYS[3], 'r'))
local used = sliding(redis.call('GET', KEYS[2]), redis.call('GET', KEYS[4]))
if used + 1 > requests * tonumber(ARGV[1]) + tonumber(ARGV[2]) then return 0 end
redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], 120)
return 1
