"""``channels.testing.WebsocketCommunicator`` without daphne.

``channels.testing``'s package ``__init__`` also imports its live-server test case, which needs
daphne; we serve with uvicorn and do not depend on daphne, so that one submodule is stubbed when
daphne is absent. The communicator itself is Channels' own, unchanged.
"""

from __future__ import annotations

import importlib.util
import sys
import types

if importlib.util.find_spec("daphne") is None and "channels.testing.live" not in sys.modules:
    _stub = types.ModuleType("channels.testing.live")
    _stub.ChannelsLiveServerTestCase = None  # type: ignore[attr-defined]
    sys.modules["channels.testing.live"] = _stub

from channels.testing import WebsocketCommunicator

__all__ = ["WebsocketCommunicator"]
