"""Failover: per-offering health (circuit breaker, cooldowns) and the retry decision."""
