"""Provider adapters: one small module per upstream wire dialect."""
