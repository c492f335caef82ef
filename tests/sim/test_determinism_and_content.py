from __future__ import annotations

import httpx2

from sim.server import start_in_thread

BODY = {"model": "deepseek-chat", "messages": [{"role": "user", "content": "Tell me something"}]}


def _answers(seed: int, n: int = 3) -> list[str]:
    with start_in_thread(seed=seed, time_scale=0) as handle, httpx2.Client(base_url=handle.base_url) as client:
        return [
            client.post("/deepseek/v1/chat/completions", json=BODY).json()["choices"][0]["message"]["content"]
            for _ in range(n)
        ]


def test_same_seed_same_requests_same_answers():
    first, second = _answers(11), _answers(11)
    assert first == second
    assert len(set(first)) > 1  # repeated requests still vary within one run


def test_other_seed_other_answers():
    assert _answers(11) != _answers(12)


def test_same_seed_same_latency_draws(sim):
    from sim.perf import draw_timing

    offering = sim.fleet.providers["openai"].offering("gpt-4.1")
    a = draw_timing(
        offering.profile, sim.fleet.clock, sim.fleet.draws_for(offering, b"x"), uncached_tokens=0, incidents=[]
    )
    sim.fleet.reset()
    b = draw_timing(
        offering.profile, sim.fleet.clock, sim.fleet.draws_for(offering, b"x"), uncached_tokens=0, incidents=[]
    )
    assert a == b


def _ask(http, provider: str, model: str, question: str) -> str:
    body = {"model": model, "messages": [{"role": "user", "content": question}]}
    for _ in range(5):  # bargain-cloud's profile fails a few requests on purpose
        response = http.post(f"/{provider}/v1/chat/completions", json=body)
        if response.status_code == 200:
            return response.json()["choices"][0]["message"]["content"]
    raise AssertionError(response.text)


def test_honest_model_answers_checkable_tasks(http):
    assert _ask(http, "openai", "gpt-4.1", "What is 17 * 23? Answer with the number only.") == "391"
    assert _ask(http, "openai", "gpt-4.1", 'Reverse the string "tokenway". Answer with the result only.') == "yawnekot"
    assert _ask(http, "openai", "gpt-4.1", "What is the capital of Japan?") == "Tokyo"
    assert _ask(http, "openai", "gpt-4.1", 'How many letters are in "banana"?') == "6"


def test_quantized_variant_gets_some_wrong(http):
    answers = [
        _ask(http, "bargain-cloud", "glm-4.6", f"What is {i} + 1000? Answer with the number only.") for i in range(60)
    ]
    wrong = sum(answer != str(i + 1000) for i, answer in enumerate(answers))
    assert 5 < wrong < 40


def test_over_reported_usage_and_billed_price_are_ground_truth(http):
    response = http.post(
        "/bargain-cloud/v1/chat/completions",
        json={"model": "glm-4.6", "messages": [{"role": "user", "content": "Tell me a story " * 50}]},
    )
    if response.status_code != 200:  # the profile has a small fault rate
        response = http.post(
            "/bargain-cloud/v1/chat/completions",
            json={"model": "glm-4.6", "messages": [{"role": "user", "content": "Tell me a story " * 51}]},
        )
    log = http.get("/_sim/requests", params={"provider": "bargain-cloud", "limit": 1}).json()["requests"][0]
    truth, reported = log["sim"]["true_usage"], log["sim"]["reported_usage"]
    assert reported["input_total"] > truth["input_total"]
    assert log["sim"]["billed_cost_micros"] > log["sim"]["published_cost_micros"]
    offering = http.get("/_sim/profiles", params={"provider": "bargain-cloud"}).json()["providers"]["bargain-cloud"][
        "offerings"
    ]["glm-4.6"]
    assert offering["billed_prices"]["input"] == round(offering["published_prices"]["input"] * 1.3)


def test_max_tokens_cuts_with_length_finish(http):
    body = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "Write a lot"}], "max_tokens": 3}
    reply = http.post("/openai/v1/chat/completions", json=body).json()
    assert reply["choices"][0]["finish_reason"] == "length"
    assert reply["usage"]["completion_tokens"] <= 3
