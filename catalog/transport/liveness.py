"""Is a silent local server still there?

A local server stopped mid-answer (uvicorn, on SIGTERM) stops listening at once but holds
the connections it has open until they end: a request to it would wait out its whole
deadline in silence. So while a keyless server is silent (before the first token, between
chunks, or for a whole plain answer), its address is checked every `policy.liveness`
seconds with a bare TCP connect: no request, so a server busy with this very answer is not
disturbed. Refused means it is gone, and the attempt ends at once as a connection failure.
Anything else (accepted, or no verdict in time) proves nothing, and the wait goes on.
"""

from __future__ import annotations

import asyncio
import socket
import time
from types import TracebackType
from urllib.parse import urlparse

from catalog.transport.errors import AttemptFailure
from catalog.transport.records import Kind


async def listening(host: str, port: int, timeout: float) -> bool | None:
    """False when every address of `host` refuses a connection on `port`; True when one
    accepts; None when that could not be told within `timeout` seconds."""
    loop = asyncio.get_running_loop()
    refused = tried = 0
    try:
        async with asyncio.timeout(timeout):
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            for family, kind, proto, _, address in infos:
                tried += 1
                with socket.socket(family, kind, proto) as sock:
                    sock.setblocking(False)
                    try:
                        await loop.sock_connect(sock, address)
                    except ConnectionRefusedError:
                        refused += 1
                        continue
                    except OSError:
                        continue
                    return True
    except (TimeoutError, OSError):
        return None
    return False if tried and refused == tried else None


class Watch:
    """Around one request to `url` (None: watch nothing): after `every` seconds without a
    word from the server (`heard()`), check that it still listens; when it does not, the
    request is cancelled and ends as an AttemptFailure of kind CONNECTION."""

    def __init__(self, url: str | None, every: float) -> None:
        parsed = urlparse(url) if url else None
        self.address: tuple[str, int] | None = None
        if parsed is not None and parsed.hostname and every > 0:
            port = parsed.port or (443 if parsed.scheme == "https" else 80)
            self.address = (parsed.hostname, port)
        self.url, self.every = url, every
        self.gone = False
        self._last = time.monotonic()
        self._task: asyncio.Task[object] | None = None
        self._dog: asyncio.Task[None] | None = None

    def heard(self) -> None:
        """The server said something: the silence starts again."""
        self._last = time.monotonic()

    async def __aenter__(self) -> Watch:
        if self.address is not None:
            self._task = asyncio.current_task()
            self.heard()
            self._dog = asyncio.create_task(self._watch(*self.address))
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._dog is not None:
            self._dog.cancel()
        if not self.gone or self._task is None:
            return
        # The cancel was ours, unless someone else's came too (Esc, a deadline): theirs
        # goes on. An answer that still arrived whole is kept.
        if self._task.uncancel() == 0 and kind is not None:
            raise AttemptFailure(
                Kind.CONNECTION,
                f"could not connect: the server at {self.url} stopped listening",
            ) from None

    async def _watch(self, host: str, port: int) -> None:
        while True:
            silent = time.monotonic() - self._last
            if silent < self.every:
                await asyncio.sleep(self.every - silent)
                continue
            if await listening(host, port, timeout=max(self.every, 2.0)) is False:
                self.gone = True
                if self._task is not None:
                    self._task.cancel()
                return
            self.heard()  # the next look, `every` seconds from now
