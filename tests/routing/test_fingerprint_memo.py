"""The remembered digest of a conversation's head is the one hashing it gives: fingerprints stay those
of the plain digest, turn after turn, whichever way the memo finds them."""

from __future__ import annotations

import hashlib

import orjson

from routing.cache_hygiene import fingerprint
from routing.cache_hygiene.fingerprint import DigestMemo, anthropic_fingerprint, openai_fingerprint

T = 41  # the tenant whose memo these heads go through


def _turn(turn: int, prompt: str) -> dict:
    later = [{"role": "assistant", "content": f"answer {n}"} for n in range(turn)]
    return {"model": "m", "messages": [{"role": "system", "content": prompt}, {"role": "user", "content": "q"}, *later]}


def _head(prompt: str) -> list[dict]:
    return [{"role": "system", "content": prompt}, {"role": "user", "content": "q"}]


def _plain_digest(*parts: object) -> str:
    return hashlib.blake2b(orjson.dumps(parts, option=orjson.OPT_SORT_KEYS), digest_size=12).hexdigest()


def test_a_large_head_keeps_its_fingerprint_on_every_turn_and_it_is_the_plain_digest():
    prompt = "Rule: keep handlers pure. " * 2000  # ~52 KB, over the memo's threshold
    first, again = openai_fingerprint(_turn(1, prompt), T), openai_fingerprint(_turn(2, "".join(list(prompt))), T)
    assert first == again == _plain_digest(None, None, _head(prompt))
    other = openai_fingerprint(_turn(1, prompt[:-1] + "!"), T)
    assert other != first and other == _plain_digest(None, None, _head(prompt[:-1] + "!"))


def test_anthropic_heads_of_both_sizes_give_the_plain_digest():
    for prompt in ("short system", "You are a coding agent. " * 500):
        body = {"system": prompt, "messages": [{"role": "user", "content": "hi"}]}
        assert (
            anthropic_fingerprint(body, T)
            == anthropic_fingerprint(body)
            == _plain_digest(prompt, None, [{"role": "user", "content": "hi"}])
        )


def test_heads_with_tools_or_blocks_or_more_fields_give_the_plain_digest():
    prompt = "You are a coding agent. " * 500
    tools = [{"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}]
    blocks = [
        {"type": "text", "text": prompt},
        {"type": "text", "text": "more", "cache_control": {"type": "ephemeral"}},
    ]
    for body, head in (
        ({**_turn(1, prompt), "tools": tools}, _head(prompt)),
        (
            _turn(1, blocks),
            [{"role": "system", "content": [blocks[0], {"type": "text", "text": "more"}]}, _head("")[1]],
        ),
        (
            {"messages": [{"role": "developer", "name": "rules", "content": prompt}, _head("")[1]]},
            [{"role": "developer", "name": "rules", "content": prompt}, _head("")[1]],
        ),
    ):
        first, again = openai_fingerprint(body, T), openai_fingerprint(orjson.loads(orjson.dumps(body)), T)
        assert first == again == _plain_digest(None, body.get("tools"), head)


def _hashed(data: bytes):
    return lambda: fingerprint._hash(data)


def _ask(memo: DigestMemo, head: bytes, summary: object = None) -> str:
    return memo.lookup(head, summary if summary is not None else head[:8], len(head), _hashed(head))


def test_the_memo_holds_no_more_than_its_byte_budget_and_forgets_the_least_recent_first():
    memo = DigestMemo(max_bytes=10_000, min_bytes=1_000)
    heads = [bytes([n]) * 4_000 for n in range(5)]
    digests = [_ask(memo, h) for h in heads]
    assert memo.held_bytes == 8_000  # the last two
    assert digests == [fingerprint._hash(h) for h in heads]
    assert memo.lookup(heads[3], heads[3][:8], 4_000, lambda: "never called") == digests[3]  # held: not computed
    assert _ask(memo, heads[0]) == digests[0] and memo.held_bytes == 8_000  # 4 went, 3 was used since
    assert memo.lookup(heads[3], heads[3][:8], 4_000, lambda: "never called") == digests[3]
    big, tiny = b"x" * 20_000, b"tiny"
    assert _ask(memo, big) == fingerprint._hash(big) and _ask(memo, tiny) == fingerprint._hash(tiny)
    assert memo.held_bytes == 8_000


def test_two_heads_with_one_summary_each_get_their_own_digest():
    memo = DigestMemo(max_bytes=100_000, min_bytes=1_000)
    one, other = b"a" * 3_000 + b"1" + b"a" * 3_000, b"a" * 3_000 + b"2" + b"a" * 3_000
    for _ in range(2):
        assert _ask(memo, one, "same") == fingerprint._hash(one)
        assert _ask(memo, other, "same") == fingerprint._hash(other) != fingerprint._hash(one)
    assert memo.held_bytes == len(other)


def test_heads_differing_only_between_the_summarised_slices_get_their_own_fingerprint():
    prompt = "Rule: keep handlers pure. " * 2000
    changed = prompt[:20_000] + "X" + prompt[20_001:]
    prints = [openai_fingerprint(_turn(1, p), T) for p in (prompt, changed, prompt, changed)]
    assert prints[0] == prints[2] == _plain_digest(None, None, _head(prompt))
    assert prints[1] == prints[3] == _plain_digest(None, None, _head(changed)) != prints[0]
    blocks = [[{"type": "text", "text": p}] for p in (prompt + "!", changed + "!")]  # through the bytes memo
    prints = [
        anthropic_fingerprint({"system": b, "messages": [{"role": "user", "content": "q"}]}, T) for b in blocks * 2
    ]
    assert prints[0] == prints[2] != prints[1] == prints[3]


def test_a_head_is_remembered_for_its_own_tenant_only():
    """A head answered from the memo is quicker than a new one: another tenant sending the same prompt
    must not find it remembered, or it could time whether someone had sent it."""
    prompt = "Confidential playbook: " + "step. " * 3000
    before = fingerprint._memo.hits
    mine = [openai_fingerprint(_turn(1, prompt), 501) for _ in range(2)]
    assert fingerprint._memo.hits == before + 1
    theirs = openai_fingerprint(_turn(1, prompt), 502)
    assert fingerprint._memo.hits == before + 1  # computed afresh, not found
    assert mine == [theirs, theirs]  # the same conversation has the same fingerprint (affinity is per tenant later)
    blocks = {"system": [{"type": "text", "text": prompt}], "messages": [{"role": "user", "content": "q"}]}
    assert anthropic_fingerprint(blocks, 501) == anthropic_fingerprint(blocks, 501)
    assert fingerprint._memo.hits == before + 2
    anthropic_fingerprint(blocks, 502)
    assert fingerprint._memo.hits == before + 2
    assert openai_fingerprint(_turn(1, prompt)) == theirs and fingerprint._memo.hits == before + 2  # no tenant: no memo
