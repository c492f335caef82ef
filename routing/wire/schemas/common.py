"""Fields every dialect shares: the model name and the gateway's own ``provider`` preferences."""

from __future__ import annotations

from routing.wire.schema import Arr, Bool, Int, Num, Obj, Str

MAX_MODEL_NAME = 256
SORTS = ("price", "latency", "throughput")

MODEL = Str(nonblank=True, max_len=MAX_MODEL_NAME)
MAX_COUNT = 2**31 - 1  # every count (tokens, choices): far above any model's window, inside what providers store
TOKEN_COUNT = Int(1, MAX_COUNT)

_SLUGS = Arr(Str())
# OpenRouter-style routing preferences (docs/routing.md); never forwarded.
PROVIDER = Obj(
    {
        "order": _SLUGS,
        "only": _SLUGS,
        "ignore": _SLUGS,
        "sort": Str(enum=SORTS),
        "allow_fallbacks": Bool(),
        "require_parameters": Bool(),
        "max_price": Obj({"prompt": Num(0, 1e9), "completion": Num(0, 1e9)}),
    },
    name="ProviderPreferences",
)
