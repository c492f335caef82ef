"""The usage spool: batched fsync'd appends, segments claimable only when nobody holds them,
removed only after Redis confirmed every event, torn lines dropped, one folder per Redis."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import threading
from pathlib import Path

import pytest
import redis

from contracts import redis_keys as rk
from routing.handoff.replay import replay_loop, replay_once
from routing.handoff.spool import UsageSpool, spool_folder
from routing.redis.pipe import RETRY_CONNECT_AFTER_S, PipelinedRedis, RedisUnavailable
from tests.routing.own_redis import OwnRedis


async def _spool_with(folder: Path, *lines: bytes) -> UsageSpool:
    spool = UsageSpool(folder)
    for line in lines:
        spool.append(line)
    spool.flush()
    return spool


async def test_a_segment_being_written_is_not_claimable_until_rotated(tmp_path):
    spool = await _spool_with(tmp_path, b'{"request_id":"a"}', b'{"request_id":"b"}')
    [path] = tmp_path.glob("*.usage")
    assert spool.segments() == []  # our own open segment is not offered
    assert UsageSpool(tmp_path).claim(path) is None  # another process: locked
    spool.rotate()
    claimed = UsageSpool(tmp_path).claim(path)
    assert claimed is not None and claimed.lines == [b'{"request_id":"a"}', b'{"request_id":"b"}']
    assert spool.claim(path) is None  # held by the other claimer
    claimed.done()
    assert not path.exists()


async def test_a_torn_last_line_is_dropped(tmp_path):
    spool = await _spool_with(tmp_path, b'{"request_id":"whole"}')
    spool.rotate()
    [path] = tmp_path.glob("*.usage")
    with path.open("ab") as out:
        out.write(b'{"request_id":"to')  # the process died mid-write
    claimed = spool.claim(path)
    assert claimed is not None and claimed.lines == [b'{"request_id":"whole"}']
    claimed.release()


async def test_segments_of_a_dead_process_are_claimed(tmp_path):
    orphan = tmp_path / "99999-1.usage"
    orphan.write_bytes(b'{"request_id":"x"}\n')
    fd = os.open(orphan, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)  # alive: its writer still holds it
    spool = UsageSpool(tmp_path)
    assert spool.segments() == [orphan] and spool.claim(orphan) is None
    os.close(fd)  # the writer died
    claimed = spool.claim(orphan)
    assert claimed is not None and claimed.lines == [b'{"request_id":"x"}']
    claimed.release()


def test_each_redis_target_has_its_own_folder(tmp_path):
    a = spool_folder(str(tmp_path), "redis://127.0.0.1:6379/0")
    b = spool_folder(str(tmp_path), "redis://:secret@127.0.0.1:6379/1")
    assert a != b and a.parent == b.parent == tmp_path.resolve()
    assert "secret" not in str(b)


@pytest.fixture
def own_redis():
    server = OwnRedis()
    server.start()
    yield server
    server.close()


async def test_replay_removes_a_segment_only_after_redis_confirmed(tmp_path, own_redis):
    spool = await _spool_with(tmp_path, b'{"request_id":"r1"}', b'{"request_id":"r2"}')
    client = PipelinedRedis(own_redis.url)
    own_redis.kill()
    with pytest.raises(RedisUnavailable):
        await replay_once(client, spool)
    assert [p.read_bytes() for p in tmp_path.glob("*.usage")] == [b'{"request_id":"r1"}\n{"request_id":"r2"}\n']
    own_redis.start()
    assert await _replay_when_reachable(client, spool) == 2  # after the client's fail-fast window
    assert list(tmp_path.glob("*.usage")) == []
    assert await replay_once(client, spool) == 0  # nothing twice
    entries = redis.Redis.from_url(own_redis.url).xrange(rk.USAGE_STREAM)
    assert [fields[b"e"] for _, fields in entries] == [b'{"request_id":"r1"}', b'{"request_id":"r2"}']
    await client.close()


async def _replay_when_reachable(client: PipelinedRedis, spool, timeout: float = 5.0) -> int:
    """``replay_once`` as soon as the client connects again (it fails fast for RETRY_CONNECT_AFTER_S
    after a refused connect); each refusal leaves the spool as it was."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        try:
            return await replay_once(client, spool)
        except RedisUnavailable:
            if asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(RETRY_CONNECT_AFTER_S / 4)


async def test_an_unwritable_spool_keeps_events_in_memory_and_says_so(tmp_path):
    blocker = tmp_path / "spool"
    blocker.write_text("a file where the folder would be")
    spool = UsageSpool(blocker / "redis-target")
    assert spool.writable is False  # probed at start, before any event needs it
    spool.append(b'{"request_id":"kept"}')
    spool.flush()
    assert spool.held == [b'{"request_id":"kept"}'] and spool.write_failures == 1 and spool.lost == 0
    assert spool.refusing is False  # Redis still takes usage
    spool.redis_failing = True
    assert spool.refusing is True
    blocker.unlink()  # the disk is back before Redis: what memory held is written
    assert spool.probe() is True and spool.held == [] and spool.refusing is False
    spool.rotate()
    [segment] = (blocker / "redis-target").glob("*.usage")
    assert segment.read_bytes() == b'{"request_id":"kept"}\n'


async def test_events_held_in_memory_are_replayed_once_redis_answers(tmp_path, own_redis):
    blocker = tmp_path / "spool"
    blocker.write_text("not a folder")
    spool = UsageSpool(blocker)
    spool.redis_failing = True
    spool.hold([b'{"request_id":"m1","tenant_id":1}', b'{"request_id":"m2","tenant_id":1}'])
    client = PipelinedRedis(own_redis.url)
    assert await replay_once(client, spool) == 2
    assert spool.held == [] and spool.redis_failing is False
    assert await replay_once(client, spool) == 0  # nothing twice
    entries = redis.Redis.from_url(own_redis.url).xrange(rk.USAGE_STREAM)
    assert [fields[b"e"] for _, fields in entries] == [
        b'{"request_id":"m1","tenant_id":1}',
        b'{"request_id":"m2","tenant_id":1}',
    ]
    await client.close()


class _BusyDisk(UsageSpool):
    """A spool whose probes after the first (at start) wait until the test lets them go, as on a disk
    busy with others' fsyncs; notes the thread each probe ran on."""

    def __init__(self, folder: Path) -> None:
        self.probe_threads: list[int] = []
        self.let_go = threading.Event()
        super().__init__(folder)

    def _write_probe(self) -> OSError | None:
        self.probe_threads.append(threading.get_ident())
        if len(self.probe_threads) > 1:
            self.let_go.wait(timeout=10)
        return super()._write_probe()


async def test_the_replay_loops_disk_probe_leaves_the_event_loop_free(tmp_path, own_redis):
    spool = _BusyDisk(tmp_path)
    loop = asyncio.get_running_loop()
    client = PipelinedRedis(own_redis.url)
    replayer = asyncio.create_task(replay_loop(client, spool, every_s=0.01))
    try:
        deadline = loop.time() + 10
        while len(spool.probe_threads) < 2:  # a round's probe is under way (and held)
            assert loop.time() < deadline, "the replay loop did not probe"
            await asyncio.sleep(0)
        assert await client.execute("PING") == b"PONG"  # the loop serves other work meanwhile
        assert spool.replay_rounds == 1
        spool.let_go.set()
        while spool.replay_rounds < 2:
            assert loop.time() < deadline, "the replay loop stopped"
            await asyncio.sleep(0)
        assert spool.writable is True
        assert spool.probe_threads[0] == threading.get_ident()  # at start: on the caller's thread
        assert threading.get_ident() not in spool.probe_threads[1:]
    finally:
        spool.let_go.set()
        replayer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await replayer
        await client.close()
