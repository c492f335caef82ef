"""Stripe meter-event emulator (aiohttp): ``python -m fakes.stripe_meter --port 12111``."""
