"""Routing simulation: replay a realistic mix against the simulated fleet under each routing strategy."""
