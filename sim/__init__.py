"""Simulated provider fleet: per-provider HTTP endpoints in the real wire dialects.

Pure asyncio + aiohttp, no Django. Start it with ``python -m sim`` or, in tests,
``sim.server.start_in_thread()``. See docs/sim.md.
"""
