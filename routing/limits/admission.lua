-- Admission of one request, atomically, in one round trip.
--
-- KEYS: 1 key rate window (hash r,t)   2 tenant rate window   3 key concurrency zset
--       4 tenant concurrency zset      5 key month spend      6 tenant available
--       7 tenant holds hash            8 tenant's hold expiries zset (scanned by the reaper)
--       9 key rate window of the previous minute   10 tenant rate window of the previous minute
--       11 tenant month spend   12 held by open holds (hash: tenant, k:<key_id>)   13 hold -> key id (hash)
-- ARGV: 1 now  2 key rpm  3 tenant rpm  4 key tpm  5 tenant tpm  6 key conc  7 tenant conc
--       8 tokens reserved  9 lease id  10 lease expiry  11 key monthly budget (-1 = none)
--       12 hold micros  13 hold id  14 hold member "<tid>:<hold_id>"  15 hold expiry
--       16 seconds left in the minute window  17 tenant monthly spend limit (-1 = none)
--       18 the key's field in KEYS[12] ("k:<key_id>")  19 key id
-- Every key carries the tenant's hash tag: one cluster slot.
-- Returns {0, 0} admitted, or {code, retry_after_seconds} refused (nothing written):
--   1 key rpm  2 tenant rpm  3 key tpm  4 tenant tpm  5 key conc  6 tenant conc
--   7 key budget  8 tenant balance  9 tenant monthly spend limit
--
-- RPM and TPM are sliding windows of 60 s, estimated from two minute counters: what this minute
-- counted plus the previous minute's count weighted by the share of it still inside the last 60 s.
-- A fixed window would let a caller spend its limit at 12:00:59 and again at 12:01:00. The previous
-- minute is read only when a limit is set, so a key without limits pays nothing for it.
--
-- Races prevented (all checks and writes are one atomic step):
-- * two requests each reading "59 of 60 used" and both passing the RPM/TPM check;
-- * two requests both taking the last concurrency slot;
-- * two requests both holding the same last dollars of the tenant's balance
--   (GET avail then DECRBY from another process would overdraw it);
-- * a refusal that had already counted the request in a window or taken a lease;
-- * many requests of one key (or tenant) admitted at once, each comparing only the settled spend
--   plus its own hold with the monthly budget (or spend limit): all of them fit, none had settled
--   yet, and together they spent the budget many times over. Every open hold is counted (KEYS[12],
--   moved in this script, settle.lua and metering's hold reaper), so the holds admitted together
--   fit the budget together.
local now = tonumber(ARGV[1])
local window_left = tonumber(ARGV[16])

local function field(key, name)
  return tonumber(redis.call('HGET', key, name) or '0')
end

-- The share of the previous minute still inside the sliding 60 s.
local carried = 1 - (now % 60) / 60

-- Seconds until the sliding count leaves room for `add`, if no other request comes: first the
-- previous minute fades out of this one; then this minute's count fades out of the next.
local function wait_for_room(limit, current, previous, add)
  local room = limit - add
  if room < 0 then return window_left + 60 end  -- larger than the limit itself: never in this window
  if current <= room then
    return math.max(1, math.ceil(60 * carried - 60 * (room - current) / previous))
  end
  return math.max(1, math.ceil(window_left + 60 * (1 - room / current)))
end

-- Refused with the seconds to wait, or nil when `add` fits under the limit.
local function refusal(limit, key, prev_key, name, add)
  if limit <= 0 then return nil end
  local current = field(key, name)
  local previous = field(prev_key, name)
  if current + previous * carried + add <= limit then return nil end
  return wait_for_room(limit, current, previous, add)
end

local tokens = tonumber(ARGV[8])
local checks = {
  {1, tonumber(ARGV[2]), KEYS[1], KEYS[9], 'r', 1}, {2, tonumber(ARGV[3]), KEYS[2], KEYS[10], 'r', 1},
  {3, tonumber(ARGV[4]), KEYS[1], KEYS[9], 't', tokens}, {4, tonumber(ARGV[5]), KEYS[2], KEYS[10], 't', tokens},
}
for _, c in ipairs(checks) do
  local wait = refusal(c[2], c[3], c[4], c[5], c[6])
  if wait then return {c[1], wait} end
end

local key_conc, tenant_conc = tonumber(ARGV[6]), tonumber(ARGV[7])
if key_conc > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  if redis.call('ZCARD', KEYS[3]) >= key_conc then return {5, 1} end
end
if tenant_conc > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
  if redis.call('ZCARD', KEYS[4]) >= tenant_conc then return {6, 1} end
end

local hold = tonumber(ARGV[12])
local key_field = ARGV[18]
-- Settled spend + what every open hold may still spend + this hold, against a monthly limit.
local function over(limit, spend_key, held_field)
  if limit < 0 then return false end
  return tonumber(redis.call('GET', spend_key) or '0') + field(KEYS[12], held_field) + hold > limit
end
if over(tonumber(ARGV[11]), KEYS[5], key_field) then return {7, 0} end
if over(tonumber(ARGV[17]), KEYS[11], 'tenant') then return {9, 0} end
if hold > 0 and hold > tonumber(redis.call('GET', KEYS[6]) or '0') then return {8, 0} end

-- Admitted: count, lease, hold.
for i = 1, 2 do
  redis.call('HINCRBY', KEYS[i], 'r', 1)
  redis.call('HINCRBY', KEYS[i], 't', tokens)
  redis.call('EXPIRE', KEYS[i], 120)
end
local lease_expiry = tonumber(ARGV[10])
if key_conc > 0 then redis.call('ZADD', KEYS[3], lease_expiry, ARGV[9]) ; redis.call('EXPIRE', KEYS[3], 3600) end
if tenant_conc > 0 then redis.call('ZADD', KEYS[4], lease_expiry, ARGV[9]) ; redis.call('EXPIRE', KEYS[4], 3600) end
if hold > 0 then
  redis.call('DECRBY', KEYS[6], hold)
  redis.call('HSET', KEYS[7], ARGV[13], hold)
  redis.call('ZADD', KEYS[8], tonumber(ARGV[15]), ARGV[14])
  redis.call('HINCRBY', KEYS[12], key_field, hold)
  redis.call('HINCRBY', KEYS[12], 'tenant', hold)
  redis.call('HSET', KEYS[13], ARGV[13], ARGV[19])
end
return {0, 0}
