"""Prompt-cache hygiene: strip volatile blocks, canonicalise prefixes, fingerprint conversations."""
