"""Billing's Stripe side: the API client (``client``), the webhooks and what they apply (``webhooks``,
``lifecycle``: refunds and disputes), and the push of postpaid usage to Stripe's meter (``meter_push``).

The rest of metering reaches Stripe only through these modules. The offline stand-ins for Stripe used in
development and tests live in the top-level ``fakes`` package.
"""
