"""The gateway: a pure ASGI app (no Django import) serving /v1/* — see docs/gateway.md."""
