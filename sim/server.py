"""Run the fleet: ``python -m sim`` (CLI), ``start_in_thread`` (tests, any code) or
``start_server`` (inside a running asyncio loop)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from sim import control, routes
from sim.fleet import Fleet
from sim.fleet_spec import DEFAULT_CATALOG
from sim.profiles import DEFAULT_PROFILES

HOST = "127.0.0.1"


def create_app(fleet: Fleet) -> web.Application:
    app = web.Application(middlewares=[control.loopback_only], client_max_size=64 * 1024 * 1024)
    app[control.FLEET_KEY] = fleet
    control.add_routes(app)
    routes.add_routes(app)
    return app


def make_fleet(
    *,
    seed: int = 0,
    time_scale: float = 1.0,
    profiles: Path | str | None = None,
    catalog: Path | str | None = None,
) -> Fleet:
    return Fleet(
        seed=seed,
        time_scale=time_scale,
        catalog_path=catalog or DEFAULT_CATALOG,
        profiles_path=profiles or DEFAULT_PROFILES,
    )


@dataclass
class AsyncSimHandle:
    """A fleet served by the current event loop; ``await handle.close()`` stops it."""

    fleet: Fleet
    port: int
    runner: web.AppRunner

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def provider_url(self, provider: str) -> str:
        """OpenAI-style base URL of one provider: ``http://127.0.0.1:PORT/<provider>/v1``."""
        return f"{self.base_url}/{provider}/v1"

    async def close(self) -> None:
        await self.runner.cleanup()


async def start_server(
    *,
    port: int = 0,
    seed: int = 0,
    time_scale: float = 1.0,
    profiles: Path | str | None = None,
    catalog: Path | str | None = None,
    fleet: Fleet | None = None,
) -> AsyncSimHandle:
    fleet = fleet or make_fleet(seed=seed, time_scale=time_scale, profiles=profiles, catalog=catalog)
    runner = web.AppRunner(create_app(fleet), access_log=None, handle_signals=False, shutdown_timeout=0.5)
    await runner.setup()
    site = web.TCPSite(runner, HOST, port, reuse_address=True)
    await site.start()
    server = site._server
    bound = (
        server.sockets[0].getsockname()[1]
        if isinstance(server, asyncio.base_events.Server) and server.sockets
        else port
    )
    return AsyncSimHandle(fleet=fleet, port=bound, runner=runner)


class SimHandle:
    """A fleet served by its own thread and event loop; ``stop()`` (or leaving ``with``) ends it."""

    def __init__(self, handle: AsyncSimHandle, loop: asyncio.AbstractEventLoop, thread: threading.Thread) -> None:
        self._handle, self._loop, self._thread = handle, loop, thread
        self.fleet = handle.fleet
        self.port = handle.port
        self.base_url = handle.base_url

    def provider_url(self, provider: str) -> str:
        return self._handle.provider_url(provider)

    def call(self, func: object) -> None:
        """Run a plain function on the fleet's loop (safe access to fleet state)."""
        done = threading.Event()

        def run() -> None:
            try:
                func()  # type: ignore[operator]
            finally:
                done.set()

        self._loop.call_soon_threadsafe(run)
        done.wait(5)

    def stop(self) -> None:
        if not self._thread.is_alive():
            return
        future = asyncio.run_coroutine_threadsafe(self._handle.close(), self._loop)
        with contextlib.suppress(TimeoutError):
            future.result(timeout=5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)

    def __enter__(self) -> SimHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_in_thread(
    *,
    port: int = 0,
    seed: int = 0,
    time_scale: float = 1.0,
    profiles: Path | str | None = None,
    catalog: Path | str | None = None,
) -> SimHandle:
    """Start a fleet on 127.0.0.1:``port`` (0 = a free port) in a daemon thread; returns once it listens."""
    loop = asyncio.new_event_loop()
    ready: list[AsyncSimHandle | BaseException] = []
    started = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            ready.append(
                loop.run_until_complete(
                    start_server(port=port, seed=seed, time_scale=time_scale, profiles=profiles, catalog=catalog)
                )
            )
        except (OSError, ValueError) as err:
            ready.append(err)
        started.set()
        if isinstance(ready[0], AsyncSimHandle):
            loop.run_forever()
        loop.close()

    thread = threading.Thread(target=run, name=f"sim-fleet-{port}", daemon=True)
    thread.start()
    started.wait(30)
    result = ready[0] if ready else TimeoutError("simulated fleet did not start")
    if isinstance(result, BaseException):
        raise result
    return SimHandle(result, loop, thread)


async def serve_forever(
    *, port: int, seed: int, time_scale: float, profiles: Path | str | None, catalog: Path | str | None
) -> None:
    handle = await start_server(port=port, seed=seed, time_scale=time_scale, profiles=profiles, catalog=catalog)
    print(
        f"simulated providers on {handle.base_url}/<provider>/v1 ({len(handle.fleet.providers)} providers)", flush=True
    )
    try:
        await asyncio.Event().wait()
    finally:
        await handle.close()
