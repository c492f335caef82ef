"""Development fakes of outside services, beside ``sim`` (the simulated provider fleet).

``stripe_meter``: Stripe's v2 meter-event API (sessions, events, summaries), an aiohttp app;
``localstripe_server``: localstripe (Stripe's v1 API and signed webhooks) bound to loopback.
Started by ``make run`` when no Stripe key is configured (devtools.local_stripe) and by the tests.
"""
