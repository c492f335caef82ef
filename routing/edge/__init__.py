"""The edge of the process: the HTTP server's own deadlines and limits, before any application code.

uvicorn keeps a connection open for as long as its client wants: no deadline for request headers
or a body, no limit on header count or size, no cap on connections. ``EdgeProtocol`` is uvicorn's
httptools protocol with those added (``limits.SocketLimits``, read from the environment) and every
refusal the server itself makes answered in the API's JSON error shape (``refusal``). Both servers
the platform runs select it: ``python -m routing`` (the gateway alone) and the web process
(``uvicorn tokenway.asgi:application --http routing.edge.protocol:EdgeProtocol``).
"""

# What ``uvicorn --http`` (or ``uvicorn.Config(http=...)``) is given to serve with the edge protocol.
PROTOCOL = "routing.edge.protocol:EdgeProtocol"
