"""A TCP proxy on loopback in front of a real server (TCP or Unix socket) that a test can freeze:
while frozen it accepts connections and reads bytes but forwards nothing either way, as a database
does when it is stopped, stuck or cut off by the network. Thawed, the held bytes flow again."""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading

from devtools.ports import free_port


class FreezableProxy:
    def __init__(self, target: str | tuple[str, int]) -> None:
        self.target = target  # a Unix socket path or (host, port)
        self.port = free_port()
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._thawed = threading.Event()
        self._thawed.set()
        self._closing = threading.Event()
        threading.Thread(target=self._accept, daemon=True, name="freezable-proxy").start()

    def freeze(self) -> None:
        self._thawed.clear()

    def thaw(self) -> None:
        self._thawed.set()

    def close(self) -> None:
        self._closing.set()
        self._thawed.set()
        self._listener.close()

    def _upstream(self) -> socket.socket:
        if isinstance(self.target, str):
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(self.target)
            return upstream
        return socket.create_connection(self.target)

    def _accept(self) -> None:
        while not self._closing.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._pipe, args=(client,), daemon=True).start()

    def _pipe(self, client: socket.socket) -> None:
        with contextlib.ExitStack() as stack:
            stack.enter_context(client)
            upstream = stack.enter_context(self._upstream())
            peers = {client: upstream, upstream: client}
            with selectors.DefaultSelector() as selector:
                for sock in peers:
                    selector.register(sock, selectors.EVENT_READ)
                while not self._closing.is_set():
                    for key, _ in selector.select(timeout=0.2):
                        data = key.fileobj.recv(65536)  # type: ignore[union-attr]
                        if not data:
                            return
                        self._thawed.wait()  # frozen: the bytes wait here, both ways
                        peers[key.fileobj].sendall(data)  # type: ignore[index]
