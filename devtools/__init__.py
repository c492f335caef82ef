"""Development tooling, not part of the product: ``make run`` and ``make test`` start from here.

``devstack`` (embedded PostgreSQL and Redis when none are configured), ``runall`` (every process of the
stack under ``supervisor``/``processes``, ready when ``stack_ready`` says so), ``local_stripe`` (the offline
Stripe of ``fakes``) and ``ports`` (free loopback ports for the servers the stack and the tests start).
No product package imports this one (an import-linter contract).
"""
