"""HTTP handlers of the gateway's endpoints; thin, one per endpoint family."""
