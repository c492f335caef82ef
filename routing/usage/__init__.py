"""Usage capture: provider usage dialects normalised into contracts.usage.Tokens."""
