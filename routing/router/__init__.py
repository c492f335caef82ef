"""Routing: candidates that fit the request, ordered by a pluggable strategy."""
