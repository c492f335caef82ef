"""Probe kinds, one module each; ``registry.PROBES`` maps a kind to its coroutine."""
