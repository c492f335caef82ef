"""Which Redis Cluster slot a command belongs to: the key it names, hashed the way Redis does.

Redis hashes a key (or only its hash tag, the text between the first ``{`` and the next ``}``
when that is not empty) with CRC16-XMODEM and keeps 14 bits: ``binascii.crc_hqx`` is that CRC,
in C. Only the commands the gateway sends are known here; a command not listed as keyless is
routed by its first argument.
"""

from __future__ import annotations

import binascii

from routing.redis.pipe import Arg

SLOTS = 16_384
# Commands without a key: sent to any node (SCRIPT LOAD to every master, by the cluster client).
KEYLESS = frozenset({b"PING", b"SCRIPT", b"INFO", b"CLUSTER", b"ASKING", b"ECHO", b"TIME", b"READONLY"})
_SCRIPTS = frozenset({b"EVAL", b"EVALSHA", b"EVAL_RO", b"EVALSHA_RO", b"FCALL", b"FCALL_RO"})
_KEYED, _SCRIPT, _KEYLESS = 0, 1, 2
# Command name as the caller spelled it -> how its key is found; filled on first sight of a spelling
# (a handful of names), so routing a command costs one dict lookup, not an upper-cased copy.
_KINDS: dict[Arg, int] = {}


def as_bytes(arg: Arg) -> bytes:
    if isinstance(arg, bytes):
        return arg
    return (arg if isinstance(arg, str) else str(arg)).encode()


def key_slot(key: Arg) -> int:
    data = as_bytes(key)
    start = data.find(b"{")
    if start >= 0:
        end = data.find(b"}", start + 1)
        if end > start + 1:
            data = data[start + 1 : end]
    return binascii.crc_hqx(data, 0) % SLOTS


def command_name(args: tuple[Arg, ...]) -> bytes:
    return as_bytes(args[0]).upper()


def _kind(name: Arg) -> int:
    kind = _KINDS.get(name)
    if kind is None:
        upper = as_bytes(name).upper()
        kind = _KINDS[name] = _SCRIPT if upper in _SCRIPTS else _KEYLESS if upper in KEYLESS else _KEYED
    return kind


def command_key(args: tuple[Arg, ...]) -> Arg | None:
    """The key that decides where ``args`` runs, or None for a keyless command.

    Scripts (EVAL/EVALSHA) by their first key (every key of one call must share its slot:
    the per-tenant hash tag); anything else by its first argument (GET, SET, XADD, HGET, ...).
    """
    kind = _kind(args[0])
    if kind == _KEYED:
        return args[1] if len(args) > 1 else None
    if kind == _SCRIPT:
        return args[3] if len(args) > 3 and int(args[2]) > 0 else None
    return None


def command_slots(args: tuple[Arg, ...]) -> set[int]:
    """Every slot a command touches (for checks: a script call must touch exactly one)."""
    name = command_name(args)
    if name in _SCRIPTS:
        return {key_slot(key) for key in args[3 : 3 + int(args[2])]}
    if name == b"MGET":
        return {key_slot(key) for key in args[1:]}
    key = command_key(args)
    return set() if key is None else {key_slot(key)}
