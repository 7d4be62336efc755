"""One harness run as a child process: started in its own process group and working
folder, fed the task document, what it prints copied into files up to ``MAX_OUTPUT_BYTES``,
and stopped with everything it started.

"Everything it started" is its process group, and also what left the group (``setsid``, a
daemon's double fork) and may have outlived the harness: each run's environment carries a
mark of its own (``RUN_MARK``), inherited by whatever it starts, by which those are found."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from .harness import MAX_OUTPUT_BYTES, HarnessConfig, HarnessFailed, RunFiles, owner_only

PUMP_CHUNK = 64 * 1024
# How long a finished harness's output may take to arrive before its group is stopped.
DRAIN_SECONDS = 5.0
# Names the run in the environment of every process it starts (a random id, no secret).
RUN_MARK = "LOBBYTALKS_HARNESS_RUN"


def process_started(pid: int) -> str | None:
    """When a process started (Linux: clock ticks after boot), which tells it from a later
    process given the same pid; None when it is gone or this cannot be read."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()  # after the name, which may hold anything
    return fields[19] if len(fields) > 19 else None


def marked_processes(mark: str) -> list[int]:
    """This user's processes started with ``RUN_MARK=mark`` in their environment (Linux's
    /proc; none where it cannot be read)."""
    entry = f"\0{RUN_MARK}={mark}\0".encode()
    found = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            if os.stat(f"/proc/{name}").st_uid != os.getuid():
                continue
            with open(f"/proc/{name}/environ", "rb") as f:
                environ = f.read()
        except OSError:  # gone meanwhile
            continue
        if entry in b"\0" + environ:
            found.append(int(name))
    return found


def signal_marked(mark: str | None, sig: int) -> int:
    """Send ``sig`` to every process of the run marked ``mark``; how many there were."""
    sent = 0
    for pid in marked_processes(mark) if mark else ():
        try:
            os.kill(pid, sig)
            sent += 1
        except OSError:
            pass
    return sent


def stop_leftover(record: dict[str, Any] | None) -> bool:
    """Stop a harness run a killed connector left behind (``Running.record``): its whole
    process group, only when that very process still runs, and whatever it started that
    still carries its mark. True when anything was stopped."""
    if not record:
        return False
    stopped = signal_marked(record.get("mark"), signal.SIGKILL) > 0
    if record.get("started") is None or process_started(record["pid"]) != record["started"]:
        return stopped
    try:
        os.killpg(record["pid"], signal.SIGKILL)
    except OSError:
        return stopped
    return True


class Running:
    """One harness run: started at once, polled by the attempt while it heartbeats."""

    def __init__(self, config: HarnessConfig, document: dict[str, Any], files: RunFiles,
                 env: dict[str, str]) -> None:
        self.config, self.files = config, files
        self.mark = uuid.uuid4().hex
        self._out = self._err = None
        self._pumps: list[threading.Thread] = []
        self.overflowed = ""  # the file the harness printed too much into
        self.unkept = ""  # why what it printed could not be kept (the state folder full)
        try:
            self._start(document, env)
        except OSError as exc:  # the state folder full or read-only, a program that will not run
            self._close_files()
            raise HarnessFailed(f"could not start the harness: {exc}") from None

    def _start(self, document: dict[str, Any], env: dict[str, str]) -> None:
        files = self.files
        with open(files.schema, "w", encoding="utf-8", opener=owner_only) as schema:
            schema.write(json.dumps(document["resultSchema"], ensure_ascii=False))
        argv = self.config.argv(files)
        found = shutil.which(argv[0], path=env.get("PATH")) if argv else None
        if found is None:
            raise HarnessFailed(f"harness executable not found: {argv[0] if argv else '(none)'}")
        # Found from the connector's folder, run from the harness's own: "./research.py"
        # must name the same file there.
        argv[0] = os.path.abspath(found)
        # Only the owner reads what the harness printed: it may hold what a result
        # refused (the secret scan's catch is kept here for the owner to see).
        self._out = open(files.stdout, "wb", opener=owner_only)
        self._err = open(files.stderr, "wb", opener=owner_only)
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, cwd=files.cwd,
                                     env={**env, RUN_MARK: self.mark}, start_new_session=True)
        # What it prints goes through us, so that the cap holds to the byte: a harness
        # writing straight into the files filled gigabytes between two looks at their size.
        self._pumps = [threading.Thread(target=self._pump, args=(pipe, kept, path.name),
                                        daemon=True)
                       for pipe, kept, path in ((self.proc.stdout, self._out, files.stdout),
                                                (self.proc.stderr, self._err, files.stderr))]
        for pump in self._pumps:
            pump.start()
        payload = self.config.stdin(document)
        # A writer thread: a large document must not block us on a full pipe.
        threading.Thread(target=self._feed, args=(payload,), daemon=True).start()

    def _pump(self, pipe: Any, kept: Any, name: str) -> None:
        """Copy ``pipe`` into ``kept`` up to ``MAX_OUTPUT_BYTES``; past that, stop the
        harness's whole process group at once."""
        written = 0
        try:
            while chunk := pipe.read1(PUMP_CHUNK):
                if written + len(chunk) > MAX_OUTPUT_BYTES:
                    kept.write(chunk[:MAX_OUTPUT_BYTES - written])
                    self.overflowed = self.overflowed or name
                    self._kill_group()
                    break
                kept.write(chunk)
                written += len(chunk)
        except OSError as exc:  # the state folder full: what it prints is lost, stop it
            self.unkept = self.unkept or f"{exc.strerror or exc} (writing {name})"
            self._kill_group()
        except ValueError:  # the file closed by stop()
            self._kill_group()
        finally:
            pipe.close()

    def _kill_group(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:  # gone already
            pass
        signal_marked(self.mark, signal.SIGKILL)

    def _feed(self, payload: bytes) -> None:
        try:
            self.proc.stdin.write(payload)
            self.proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass

    def record(self) -> dict[str, Any]:
        """What lets a restarted connector find this run again (``stop_leftover``)."""
        return {"pid": self.proc.pid, "started": process_started(self.proc.pid),
                "mark": self.mark}

    def finished(self) -> bool:
        return self.proc.poll() is not None

    def check_output_size(self) -> None:
        """:raise HarnessFailed: the harness printed more than ``MAX_OUTPUT_BYTES``, or
        wrote more into the file it leaves its last message in (Codex writes that itself,
        so it is measured between ticks), or what it printed could not be kept."""
        too_large = self.overflowed
        try:
            if self.files.last_message.stat().st_size > MAX_OUTPUT_BYTES:
                too_large = self.files.last_message.name
        except OSError:
            pass
        if too_large:
            raise HarnessFailed(f"the harness wrote more than {MAX_OUTPUT_BYTES >> 20} MiB "
                                f"to {too_large}; it was stopped")
        if self.unkept:  # said as the cause, not the harness's last words before it
            raise HarnessFailed(f"the state folder could not keep what the harness printed: "
                                f"{self.unkept}; it was stopped")

    def result(self) -> dict[str, Any]:
        """After :meth:`finished`: the result, or :class:`HarnessFailed` with stderr's last line."""
        self._drain()
        self._close_files()
        self.check_output_size()
        if self.proc.returncode != 0:
            raise HarnessFailed(self.config.reported_error(self.files)
                                or _last_line(self.files.stderr)
                                or f"the harness exited with status {self.proc.returncode}")
        return self.config.read_result(self.files)

    def stop(self, grace: float = 5.0) -> None:
        """Stop the harness and whatever it started (its process group), also what it left
        running when it exited by itself."""
        if self.proc.poll() is None:
            for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
                signal_marked(self.mark, sig)  # also told to end now, not killed after
                try:
                    os.killpg(self.proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    self.proc.wait(timeout=wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        # The group outlives its leader while any member lives (and its id is not given to
        # another process meanwhile): what is left of it goes now, with what left the group.
        self._kill_group()
        self._drain()
        self._close_files()

    def _drain(self) -> None:
        """Let the pumps copy what is still in the pipes, for a few seconds in all: a
        process that left the group may hold them open for as long as it likes."""
        deadline = time.monotonic() + DRAIN_SECONDS
        for pump in self._pumps:
            pump.join(max(0.0, deadline - time.monotonic()))

    def _close_files(self) -> None:
        for f in (self._out, self._err):
            if f is not None and not f.closed:
                f.close()


def _last_line(path: Path) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - 64 * 1024))
            lines = f.read().decode("utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1].strip() if lines else ""
