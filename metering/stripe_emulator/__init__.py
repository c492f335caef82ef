"""Stripe meter-event emulator (aiohttp): ``python -m metering.stripe_emulator --port 12111``."""
