"""``POST /v1/embeddings``: OpenAI's request (``input`` as a string, strings, a token array or token arrays;
``encoding_format``; ``dimensions``) plus the gateway's own ``provider`` preferences. What one shape of
``input`` may hold (all strings or all tokens, at most ``MAX_INPUTS``) is read in routing/wire/embeddings.py."""

from __future__ import annotations

from routing.wire.schema import Arr, Either, Int, Obj, Str
from routing.wire.schemas.common import MAX_COUNT, MODEL, PROVIDER

ENCODINGS = ("float", "base64")
MAX_DIMENSIONS = 16384  # above every embedding model's vector; the offering's own limit is the provider's 400

TOKEN_ID = Int(0, MAX_COUNT)
_ITEM = Either(Str(), TOKEN_ID, Arr(TOKEN_ID, min_items=1))
INPUT = Either(Str(), Arr(_ITEM, min_items=1))

EMBEDDINGS_REQUEST = Obj(
    {
        "model": MODEL,
        "input": INPUT,
        "encoding_format": Str(enum=ENCODINGS),
        "dimensions": Int(1, MAX_DIMENSIONS),
        "user": Str(),
        "provider": PROVIDER,
    },
    required=("model", "input"),
    name="EmbeddingsRequest",
)
