"""``lobbytalks serve --workers N``: N server processes on one host, one listening socket.

The parent binds the address, then forks the children. Each child builds its own app (so
it opens its own database connections, after the fork) and runs the waitress server of
``serving`` on the inherited sockets; the kernel hands each new connection to one of them.
The parent only supervises: it starts the children one after another (the first one
migrates the database before the others open it), forwards SIGTERM/SIGINT, restarts a
child that dies with a growing delay, and exits when asked.

Several processes need a database they can share and rate limits kept outside any one
process; ``refusal`` says what is missing.
"""
from __future__ import annotations

import os
import select
import signal
import socket
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Callable

from waitress.adjustments import Adjustments

from . import draining
from .limits import shared_across_processes
from .settings import POSTGRESQL_URL_PREFIXES, Settings
from .stop_signals import STOP_SIGNALS

# A child builds its app, calls ``ready()`` once it can serve, then serves until stopped.
ChildMain = Callable[[Callable[[], None]], None]

POLL_SECONDS = 0.2
STOP_GRACE_SECONDS = 10         # a child drains for 4 s, then waits 5 s at most (``draining``)
PARENT_CHECK_SECONDS = 1.0


def supports_several_processes(settings: Settings) -> bool:
    """Whether the database backend lets several server processes share it.

    SQLite does not (the server lock keeps one server per file); PostgreSQL does.
    """
    return settings.database_url.startswith(POSTGRESQL_URL_PREFIXES)


def refusal(settings: Settings) -> str | None:
    """Why ``settings.workers`` processes cannot run, or None when they can."""
    if settings.workers < 1:
        return "--workers must be at least 1"
    if settings.workers == 1:
        return None
    if not supports_several_processes(settings):
        return ("--workers needs a database several processes can share "
                "(LOBBYTALKS_DATABASE_URL=postgresql://…); one SQLite file allows one server")
    if not shared_across_processes(settings.ratelimit_storage):
        return ("--workers: limits would be per process; "
                "set LOBBYTALKS_RATELIMIT_STORAGE=redis://…")
    return None


def listening_at(settings: Settings, sockets: list[socket.socket]) -> str:
    """The address the server listens on, as a URL (an IPv6 address in brackets), with the
    port its socket got (the system picks one for port 0)."""
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    return f"http://{host}:{sockets[0].getsockname()[1] if sockets else settings.port}"


def bind(settings: Settings) -> list[socket.socket]:
    """Listening sockets for ``settings.host``/``port`` (one per address family), as
    waitress itself would bind them. :raise OSError: when the address is taken."""
    try:
        adj = Adjustments(host=settings.host, port=settings.port)
    except ValueError:  # waitress could not resolve it: a name unknown here, no address
        raise OSError(f"{settings.host!r} is no address or name of this machine") from None
    sockets = []
    for family, socktype, proto, address in adj.listen:
        sock = socket.socket(family, socktype, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind(address)
        sock.listen(adj.backlog)
        sockets.append(sock)
    return sockets


def listen_refusal(settings: Settings, error: OSError) -> str:
    """What ``serve`` says, in one line, when ``bind`` fails (the port is taken)."""
    return f"cannot listen on {settings.host}:{settings.port}: {error.strerror or error}"


@dataclass
class _Child:
    slot: int
    pid: int
    started: float


class Supervisor:
    """Runs ``count`` children of ``child_main`` until SIGTERM/SIGINT.

    ``sockets``, which the children inherit, it closes first when it stops: the kernel
    would accept connections into them that no draining child takes, reset at its exit.
    A child that exits is started again after ``first_delay`` seconds, doubling with each
    further failure up to ``max_delay``; a child that stayed up ``stable_after`` seconds
    starts the count afresh. If a child cannot start at all on the first round, the others
    are stopped and ``run`` returns 1 (the child printed why).
    """

    def __init__(self, child_main: ChildMain, count: int, sockets: list[socket.socket], *,
                 first_delay: float = 0.5, max_delay: float = 30.0, stable_after: float = 30.0,
                 on_serving: Callable[[], None] = lambda: None) -> None:
        self._child_main, self._on_serving = child_main, on_serving
        self._sockets = sockets
        self._count = count
        self._first_delay, self._max_delay, self._stable_after = first_delay, max_delay, stable_after
        self._children: dict[int, _Child] = {}      # pid -> child
        self._failures = [0] * count               # consecutive failures per slot
        self._due: dict[int, float] = {}           # slot -> when to start it again
        self._stopping = False
        # True in the first child of the first round only (read by ``child_main``)
        self.first_of_run = False

    def run(self) -> int:
        previous = {sig: signal.signal(sig, self._ask_to_stop) for sig in STOP_SIGNALS}
        try:
            for slot in range(self._count):
                if not self._start(slot) and not self._stopping:
                    return 1
            if not self._stopping:
                self._on_serving()
            while not self._stopping:
                self._reap()
                self._start_due()
                time.sleep(POLL_SECONDS)
            return 0
        finally:
            self._stop_all()
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _ask_to_stop(self, signum, frame) -> None:
        if self._stopping:  # a second signal means "now": passed on, the children's second
            for pid in list(self._children):
                _signal(pid, signal.SIGTERM)
        self._stopping = True

    def _start(self, slot: int, restart: bool = False) -> bool:
        """Fork one child and wait until it serves; False if it died first. No deadline:
        the first child migrates the database (or waits for another process doing it, or
        re-indexes), which takes as long as the database is large; a failing one says why."""
        ready_r, ready_w = os.pipe()
        parent = os.getpid()
        self.first_of_run = slot == 0 and not restart
        pid = os.fork()
        if pid == 0:
            os.close(ready_r)
            _child_process(self._child_main, ready_w, parent)  # never returns
        os.close(ready_w)
        self._children[pid] = _Child(slot, pid, time.monotonic())
        try:
            while not self._stopping:
                readable, _, _ = select.select([ready_r], [], [], POLL_SECONDS)
                if readable:
                    if os.read(ready_r, 1):
                        return True
                    break  # the pipe closed: the child ended before it was ready
            # Asked to stop meanwhile: not a failure. A child that died is reaped (and
            # started again) by the main loop.
            return self._stopping
        finally:
            os.close(ready_r)

    def _reap(self) -> None:
        while self._children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            child = self._children.pop(pid, None)
            if child is None or self._stopping:
                continue
            self._schedule_restart(child, os.waitstatus_to_exitcode(status))

    def _schedule_restart(self, child: _Child, code: int) -> None:
        if time.monotonic() - child.started >= self._stable_after:
            self._failures[child.slot] = 0
        self._failures[child.slot] += 1
        delay = min(self._max_delay, self._first_delay * 2 ** (self._failures[child.slot] - 1))
        how = f"signal {-code}" if code < 0 else f"status {code}"
        print(f"lobbytalks: worker {child.pid} exited ({how}); starting another in "
              f"{delay:.1f} s", file=sys.stderr, flush=True)
        self._due[child.slot] = time.monotonic() + delay

    def _start_due(self) -> None:
        now = time.monotonic()
        for slot, when in list(self._due.items()):
            if when <= now and not self._stopping:
                del self._due[slot]
                self._start(slot, restart=True)  # a failed start is reaped and scheduled again

    def _stop_all(self) -> None:
        """Stop listening, SIGTERM every child, wait for them, SIGKILL whoever outlasts
        the grace."""
        self._stopping = True
        for sock in self._sockets:
            sock.close()
        for pid in self._children:
            _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        while self._children and time.monotonic() < deadline:
            for pid in list(self._children):
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    del self._children[pid]
            time.sleep(0.05)
        for pid in list(self._children):
            _signal(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            del self._children[pid]


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _child_process(child_main: ChildMain, ready_w: int, parent: int) -> None:
    """The forked child: run ``child_main`` and leave with its outcome, never returning
    into the parent's code."""
    code = 1
    try:
        # SIGTERM ends the child's server cleanly (``draining``). Ctrl-C and a closed
        # terminal's SIGHUP reach the whole process group, and the supervisor passes them on
        # as SIGTERM: taken as well, either would be a second signal, "stop now".
        for sig in STOP_SIGNALS:
            signal.signal(sig, draining.ask_to_stop if sig == signal.SIGTERM else signal.SIG_IGN)
        threading.Thread(target=_end_with_parent, args=(parent,), daemon=True).start()

        def ready() -> None:
            os.write(ready_w, b"1")
            os.close(ready_w)
        child_main(ready)
        code = 0
    except (SystemExit, KeyboardInterrupt) as exc:
        code = exc.code if isinstance(exc, SystemExit) and isinstance(exc.code, int) else 0
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _end_with_parent(parent: int) -> None:
    """A supervisor killed outright (SIGKILL) must not leave its children serving."""
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_SECONDS)
    os.kill(os.getpid(), signal.SIGTERM)


def serve_several(settings: Settings, make_app: Callable[[Settings], object]) -> int:
    """``lobbytalks serve`` with ``settings.workers`` processes (``refusal`` passed)."""
    from . import serving

    try:
        sockets = bind(settings)
    except OSError as exc:
        print(f"lobbytalks: {listen_refusal(settings, exc)}", file=sys.stderr)
        return 1

    def child_main(ready: Callable[[], None]) -> None:
        # The configured admin is set up once, by the first worker as the server starts:
        # not by the next one (the first already serves, and a password changed meanwhile
        # stays changed), nor by a worker replaced after a crash.
        app = make_app(settings if supervisor.first_of_run
                       else settings.with_overrides(admin_username="", admin_password=""))
        if app is None:  # make_app printed why
            raise SystemExit(1)
        ready()
        serving.serve(app, settings, sockets=sockets)

    served = []

    def announce() -> None:
        served.append(True)
        print(f"LobbyTalks serving at {listening_at(settings, sockets)} with "
              f"{settings.workers} worker processes", flush=True)

    supervisor = Supervisor(child_main, settings.workers, sockets, on_serving=announce)
    code = supervisor.run()
    if served:
        print("LobbyTalks stopped", flush=True)
    return code
