"""Metrics and traces: leaves of the gateway that import nothing of the request path (only routing.http)."""
