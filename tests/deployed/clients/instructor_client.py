"""instructor over the official Python SDK's chat completions: a streamed partial object (create_partial), a
response_model in its default tools mode (a forced tool the model fills), and in JSON-schema mode
(response_format json_schema); each validated by instructor into the pydantic model; for each target offering."""

from __future__ import annotations

from typing import Any

import instructor
from client_common import BASE_URL, KEY, STRUCTURED_PROMPT, Weather, run
from openai import OpenAI

SDK = OpenAI(base_url=f"{BASE_URL}/v1", api_key=KEY, max_retries=0, timeout=60)


def create(target: dict[str, Any], mode: instructor.Mode) -> Any:
    return instructor.from_openai(SDK, mode=mode).chat.completions


def body(target: dict[str, Any]) -> dict[str, Any]:
    return {
        "model": target["model"],
        "messages": [{"role": "user", "content": STRUCTURED_PROMPT}],
        "max_tokens": 512,
        "max_retries": 0,
        "extra_body": {"provider": target["provider"]},
    }


def stream(target: dict[str, Any]) -> dict[str, Any]:
    partials = list(create(target, instructor.Mode.TOOLS).create_partial(response_model=Weather, **body(target)))
    final = Weather.model_validate(partials[-1].model_dump())
    return {"chunks": len(partials), "text": final.model_dump_json(), "input_tokens": None, "output_tokens": None}


def structured(target: dict[str, Any]) -> dict[str, Any]:
    answer = create(target, instructor.Mode.TOOLS).create(response_model=Weather, **body(target))
    return {"parsed": answer.model_dump(), "valid": isinstance(answer, Weather)}


def structured_json_schema(target: dict[str, Any]) -> dict[str, Any]:
    answer = create(target, instructor.Mode.JSON_SCHEMA).create(response_model=Weather, **body(target))
    return {"parsed": answer.model_dump(), "valid": isinstance(answer, Weather)}


run(lambda variant: {"stream": stream, "structured": structured, "structured_json_schema": structured_json_schema})
