"""One ASGI application: ``/v1/*`` (and Claude Code's HEAD probes) go to the gateway,
everything else to Django over Channels (HTTP and websockets)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

_PLATFORM_DIR = str(Path(__file__).resolve().parents[1])
if _PLATFORM_DIR not in sys.path:
    sys.path.append(_PLATFORM_DIR)
_ROOT_DIR = str(Path(__file__).resolve().parents[2])
if _ROOT_DIR not in sys.path:
    sys.path.append(_ROOT_DIR)

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tokenway.settings")

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.core.asgi import get_asgi_application  # noqa: E402

django_http = get_asgi_application()

from frontend.ws_urls import websocket_urlpatterns  # noqa: E402
from routing.app import is_gateway_path, make_gateway_app  # noqa: E402
from routing.http.asgi_io import MAX_HEADER_BYTES, headers_too_large, respond  # noqa: E402
from tokenway import health_asgi  # noqa: E402

_HEADERS_TOO_LARGE = (
    b'{"error":{"code":"headers_too_large","message":"request headers exceed %d bytes","param":null}}'
    % MAX_HEADER_BYTES
)

gateway = make_gateway_app()
django_app = ProtocolTypeRouter({"http": django_http, "websocket": URLRouter(websocket_urlpatterns)})


async def application(scope: health_asgi.Scope, receive: health_asgi.Receive, send: health_asgi.Send) -> None:
    if scope["type"] == "lifespan":  # the gateway's clients and refreshers, and the background health checks
        await gateway(scope, health_asgi.lifespan_receive(receive), send)
        return
    if scope["type"] in ("http", "websocket") and is_gateway_path(scope):  # /v1 websockets: refused there
        await gateway(scope, receive, send)
        return
    if scope["type"] == "http" and scope["path"] in health_asgi.PATHS:  # from memory, before Django
        await health_asgi.serve(scope, send)
        return
    if scope["type"] == "http" and headers_too_large(scope):
        await respond(send, 431, _HEADERS_TOO_LARGE, [])
        return
    await django_app(scope, receive, send)
