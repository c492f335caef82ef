"""Everything the gateway reads from Redis, built and published here and nowhere else.

``keys`` (key records), ``catalog_snapshot`` (the routing catalog), ``balances`` (the spendable counters,
through metering's ledger), ``everything`` (all of it, for startup and a Redis that came back empty), and
``drain``: the outbox rows other apps write in the transaction of a change, published once each.
The top of the platform apps: it reads tenants, keys, credentials, the catalog and metering; none of them
import it (an import-linter contract).
"""
