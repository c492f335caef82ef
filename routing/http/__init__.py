"""HTTP as every layer of the gateway speaks it: ASGI messages and request bodies, SSE frames, and the
error types a caller sees (rendered per dialect in routing.wire). Imports nothing else of routing."""
