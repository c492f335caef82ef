"""The official Node SDK (``openai`` from npm, pinned, installed into tests/.tools as the agent CLIs are)
calling ``embeddings.create`` against the running stack: a batch of floats with ``dimensions``, the SDK's
default (base64 on the wire, numbers to the caller) and an explicit base64 the caller decodes; each call
billed exactly: its generation record is the provider's input tokens at the catalog price, to the micro-unit."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from typing import Any

import pytest
import requests

from contracts.usage import Tokens, cost_micros
from tests.catalogs import sim_offerings
from tests.npm_tools import npm_package
from tests.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.deployed, pytest.mark.timeout(600)]

PASSAGE = "Tokenway measures every offering from several regions and routes each request to the best one. " * 6

# Three calls, each printed as one JSON object: what the caller got and the request id to look it up by.
SCRIPT = r"""
const OpenAI = require("openai");
const client = new OpenAI({ baseURL: process.env.BASE_URL + "/v1", apiKey: process.env.KEY, maxRetries: 0 });
const passage = process.env.PASSAGE;
const floats = (item) => typeof item.embedding === "string"
  ? Array.from(new Float32Array(Uint8Array.from(Buffer.from(item.embedding, "base64")).buffer))
  : item.embedding;
async function call(name, body) {
  const { data, response } = await client.embeddings.create(body).withResponse();
  const vectors = data.data.map(floats);
  return {
    name, request_id: response.headers.get("x-request-id"), model: data.model, usage: data.usage,
    indexes: data.data.map((d) => d.index), encoded: data.data.map((d) => typeof d.embedding),
    dimensions: vectors.map((v) => v.length), norms: vectors.map((v) => Math.sqrt(v.reduce((s, x) => s + x * x, 0))),
  };
}
(async () => {
  const out = [
    await call("floats", { model: "text-embedding-3-small", input: [passage, passage + " Two.", passage + " Three."],
                           encoding_format: "float", dimensions: 256 }),
    await call("sdk-default", { model: "text-embedding-3-large", input: passage }),
    await call("base64", { model: "text-embedding-3-small", input: [passage, "short"], encoding_format: "base64" }),
  ];
  console.log(JSON.stringify(out));
})().catch((error) => { console.error(error); process.exit(1); });
"""


@pytest.fixture
def own_key(stack) -> str:
    """A key of the demo tenant for this test alone."""
    result = stack.make("manage", "ARGS=create_api_key --tenant demo --name embeddings-node")
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def _billed(stack, key: str, request_id: str) -> dict[str, Any]:
    def ingested() -> dict[str, Any] | None:
        response = requests.get(
            f"{stack.base_url}/api/v1/generation",
            params={"id": request_id},
            headers={"Authorization": f"Bearer {key}"},
            timeout=10,
        )
        record = response.json() if response.status_code == 200 else None
        return record if record and record.get("ingested") else None

    record = wait_until(ingested, timeout=60, interval=0.25, message=f"{request_id} in the ledger")
    assert record is not None
    return record


def test_node_sdk_embeddings_create_decodes_the_vectors_and_is_billed_exactly(stack, own_key, tmp_path):
    if not shutil.which("node"):
        pytest.skip("node is not installed: cannot run the Node SDK")
    modules = npm_package("openai").parent
    script = tmp_path / "embeddings.cjs"
    script.write_text(SCRIPT)
    env = {**os.environ, "NODE_PATH": str(modules), "BASE_URL": stack.base_url, "KEY": own_key, "PASSAGE": PASSAGE}
    result = subprocess.run(["node", str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    calls = {call["name"]: call for call in json.loads(result.stdout)}

    expected = {"floats": (3, 256, "object"), "sdk-default": (1, 3072, "object"), "base64": (2, 1536, "string")}
    for name, (count, dimensions, encoded) in expected.items():
        call = calls[name]
        assert call["indexes"] == list(range(count)) and call["dimensions"] == [dimensions] * count, call
        assert call["encoded"] == [encoded] * count  # base64 is the caller's to decode only when it asked
        assert all(abs(norm - 1) < 1e-4 for norm in call["norms"]), call["norms"]  # decoded to unit vectors
        assert call["usage"]["prompt_tokens"] == call["usage"]["total_tokens"] > 0

    prices = {(o.provider, o.model): o.prices for o in sim_offerings(lambda slug: "")}
    for call in calls.values():
        record = _billed(stack, own_key, call["request_id"])
        assert record["model"] == call["model"] and record["status"] == "ok"
        tokens = record["tokens"]
        assert tokens["input_uncached"] == call["usage"]["prompt_tokens"] and tokens["output"] == 0
        price = prices[(record["provider"], record["model"])]
        assert record["charge_micros"] == cost_micros(Tokens(input_uncached=tokens["input_uncached"]), price) > 0
