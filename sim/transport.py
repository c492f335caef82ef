"""Connection-level faults: drop the connection without an answer (refused) or with a TCP reset."""

from __future__ import annotations

import contextlib
import socket
import struct

from aiohttp import web


class ConnectionDropped(web.HTTPException):
    """Raised after the transport is gone, so aiohttp writes nothing more."""

    status_code = 499


def drop(request: web.Request, *, reset: bool) -> None:
    transport = request.transport
    if transport is None:
        return
    if reset:
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        transport.abort()
    else:
        transport.close()
