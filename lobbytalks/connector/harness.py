"""Research harnesses: codex, claude or any command, run as a child process.

The harness gets the question and returns a result; it never gets the token. Its
environment is the connector's minus the token variable (and anything holding the token's
value), it runs in its own working folder in the state folder, in its own process group so
that stopping it stops everything it started, and under a time limit.
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


HARNESSES = ("codex", "claude", "command")
DEFAULT_CLAUDE_TOOLS = "WebSearch,WebFetch"
DEFAULT_CODEX_SANDBOX = "read-only"
# What a harness may print before it is stopped: a result is at most 64 KiB once sent,
# and a runaway loop must not fill the disk or the connector's memory.
MAX_OUTPUT_BYTES = 16 * 1024 * 1024

def _owner_only(path: str, flags: int) -> int:
    return os.open(path, flags, 0o600)


class HarnessFailed(Exception):
    """The harness ended without a usable result; ``reason`` is for the owner (unredacted)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class ResultUnreadable(HarnessFailed):
    """The harness finished but what it printed is no JSON object: it gets the same second
    chance as a result that breaks the rules."""


def scrubbed_env(token: str, token_env: str) -> dict[str, str]:
    return {k: v for k, v in os.environ.items()
            if k != token_env and token not in v and not k.startswith("LOBBYTALKS_AGENT_")}


@dataclass
class HarnessConfig:
    kind: str
    command: str = ""                     # for "command"
    claude_tools: str = DEFAULT_CLAUDE_TOOLS
    codex_sandbox: str = DEFAULT_CODEX_SANDBOX
    extra_args: list[str] = field(default_factory=list)

    def executable(self) -> str:
        if self.kind == "command":
            parts = shlex.split(self.command)
            return parts[0] if parts else ""
        return self.kind

    def found(self, path: str | None) -> str | None:
        """Where the harness program is on ``path`` (the harness's own PATH), if anywhere."""
        program = self.executable()
        return shutil.which(program, path=path) if program else None

    def version_argv(self) -> list[str] | None:
        return None if self.kind == "command" else [self.kind, "--version"]

    def argv(self, files: "RunFiles") -> list[str]:
        if self.kind == "codex":
            return ["codex", "exec", "--skip-git-repo-check", "--sandbox", self.codex_sandbox,
                    "--cd", str(files.cwd), "--output-schema", str(files.schema),
                    "--output-last-message", str(files.last_message), *self.extra_args, "-"]
        if self.kind == "claude":
            return ["claude", "-p", "--output-format", "json",
                    "--json-schema", json.dumps(json.loads(files.schema.read_text("utf-8"))),
                    "--allowedTools", self.claude_tools, *self.extra_args]
        return [*shlex.split(self.command), *self.extra_args]

    def stdin(self, document: dict[str, Any]) -> bytes:
        if self.kind == "command":
            return json.dumps(document, ensure_ascii=False).encode()
        return document["prompt"].encode()

    def read_result(self, files: "RunFiles") -> dict[str, Any]:
        """The result object the harness produced, or :class:`HarnessFailed`."""
        if self.kind == "codex":
            text = _read(files.last_message, "codex wrote no last message")
        else:
            text = _read(files.stdout, "the harness printed nothing")
        if self.kind == "claude":
            envelope = _parse_object(text, "claude's output is not a JSON object")
            if envelope.get("is_error"):
                raise HarnessFailed(_claude_error(envelope))
            if isinstance(envelope.get("structured_output"), dict):
                return envelope["structured_output"]
            text = str(envelope.get("result", ""))
        return _parse_object(text, "the result is not a JSON object")

    def reported_error(self, files: "RunFiles") -> str | None:
        """Claude Code's own account of a failure ("Not logged in"), which it prints as its
        JSON output, exiting 0 or not, with nothing on stderr."""
        if self.kind != "claude":
            return None
        try:
            envelope = _parse_object(_read(files.stdout, ""), "")
        except HarnessFailed:
            return None
        return _claude_error(envelope) if envelope.get("is_error") else None


@dataclass
class RunFiles:
    cwd: Path
    schema: Path
    last_message: Path
    stdout: Path
    stderr: Path

    @classmethod
    def in_folder(cls, folder: Path, run: int) -> "RunFiles":
        cwd = folder / "cwd"
        cwd.mkdir(exist_ok=True, mode=0o700)
        return cls(cwd=cwd, schema=folder / "result-schema.json",
                   last_message=folder / f"last-message-{run}.json",
                   stdout=folder / f"stdout-{run}.txt", stderr=folder / f"stderr-{run}.txt")


def process_started(pid: int) -> str | None:
    """When a process started (Linux: clock ticks after boot), which tells it from a later
    process given the same pid; None when it is gone or this cannot be read."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()  # after the name, which may hold anything
    return fields[19] if len(fields) > 19 else None


def stop_leftover(record: dict[str, Any] | None) -> bool:
    """Stop a harness run a killed connector left behind (``Running.record``): its whole
    process group, only when that very process still runs. True when one was stopped."""
    if not record or record.get("started") is None:
        return False
    if process_started(record["pid"]) != record["started"]:
        return False
    try:
        os.killpg(record["pid"], signal.SIGKILL)
    except OSError:
        return False
    return True


class Running:
    """One harness run: started at once, polled by the attempt while it heartbeats."""

    def __init__(self, config: HarnessConfig, document: dict[str, Any], files: RunFiles,
                 env: dict[str, str]) -> None:
        self.config, self.files = config, files
        self._out = self._err = None
        try:
            self._start(document, env)
        except OSError as exc:  # the state folder full or read-only, a program that will not run
            self._close_files()
            raise HarnessFailed(f"could not start the harness: {exc}") from None

    def _start(self, document: dict[str, Any], env: dict[str, str]) -> None:
        files = self.files
        with open(files.schema, "w", encoding="utf-8", opener=_owner_only) as schema:
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
        self._out = open(files.stdout, "wb", opener=_owner_only)
        self._err = open(files.stderr, "wb", opener=_owner_only)
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=self._out,
                                     stderr=self._err, cwd=files.cwd, env=env,
                                     start_new_session=True)
        payload = self.config.stdin(document)
        # A writer thread: a large document must not block us on a full pipe.
        threading.Thread(target=self._feed, args=(payload,), daemon=True).start()

    def _feed(self, payload: bytes) -> None:
        try:
            self.proc.stdin.write(payload)
            self.proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass

    def record(self) -> dict[str, Any]:
        """What lets a restarted connector find this run again (``stop_leftover``)."""
        return {"pid": self.proc.pid, "started": process_started(self.proc.pid)}

    def finished(self) -> bool:
        return self.proc.poll() is not None

    def check_output_size(self) -> None:
        """:raise HarnessFailed: the harness printed more than ``MAX_OUTPUT_BYTES``."""
        for path in (self.files.stdout, self.files.stderr, self.files.last_message):
            try:
                size = path.stat().st_size
            except OSError:
                continue
            if size > MAX_OUTPUT_BYTES:
                raise HarnessFailed(f"the harness wrote more than {MAX_OUTPUT_BYTES >> 20} MiB "
                                    f"to {path.name}; it was stopped")

    def result(self) -> dict[str, Any]:
        """After :meth:`finished`: the result, or :class:`HarnessFailed` with stderr's last line."""
        self._close_files()
        self.check_output_size()
        if self.proc.returncode != 0:
            raise HarnessFailed(self.config.reported_error(self.files)
                                or _last_line(self.files.stderr)
                                or f"the harness exited with status {self.proc.returncode}")
        return self.config.read_result(self.files)

    def stop(self, grace: float = 5.0) -> None:
        """Stop the harness and whatever it started (its process group)."""
        if self.proc.poll() is None:
            for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
                try:
                    os.killpg(self.proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    self.proc.wait(timeout=wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        self._close_files()

    def _close_files(self) -> None:
        for f in (self._out, self._err):
            if f is not None and not f.closed:
                f.close()


def _claude_error(envelope: dict[str, Any]) -> str:
    return f"claude reported an error: {str(envelope.get('result', '')).strip()[:300]}"


def _read(path: Path, missing: str) -> str:
    try:
        with open(path, "rb") as f:
            return f.read(MAX_OUTPUT_BYTES).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        raise HarnessFailed(missing) from None


def _parse_object(text: str, problem: str) -> dict[str, Any]:
    text = text.strip()
    if text.startswith("```"):  # a model may fence its JSON
        text = text.strip("`").removeprefix("json").strip()
    try:
        value = json.loads(text)
    except ValueError:
        raise ResultUnreadable(problem) from None
    if not isinstance(value, dict):
        raise ResultUnreadable(problem)
    return value


def _last_line(path: Path) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - 64 * 1024))
            lines = f.read().decode("utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1].strip() if lines else ""
