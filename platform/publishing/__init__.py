"""Everything the gateway reads from Redis, built and published here and nowhere else.

``keys`` (key records), ``catalog_snapshot`` (the routing catalog), ``money_counters`` (the spendable and
spend counters: metering computes them from its ledger and plugs them in), ``everything`` (all of it, for
startup and a Redis that came back empty), and ``drain``: the outbox rows other apps write in the
transaction of a change, published once each. Above the other platform apps: it reads tenants, keys,
credentials and the catalog; none of them import it, and it imports no domain (import-linter contracts).
"""
