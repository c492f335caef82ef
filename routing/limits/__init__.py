"""Admission (rate, tokens, concurrency, budget, balance hold) and settlement, one Lua script each."""
