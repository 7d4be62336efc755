"""Research harnesses: codex, claude or any command, run as a child process (``running``).

The harness gets the question and returns a result; it never gets the token. Its
environment is the connector's minus the token variable (and anything holding the token's
value), it runs in its own working folder in the state folder, in its own process group so
that stopping it stops everything it started, and under a time limit.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..security import agent_tokens_in


HARNESSES = ("codex", "claude", "command")
DEFAULT_CLAUDE_TOOLS = "WebSearch,WebFetch"
DEFAULT_CODEX_SANDBOX = "read-only"
# What a harness may print before it is stopped: a result is at most 64 KiB once sent,
# and a runaway loop must not fill the disk or the connector's memory.
MAX_OUTPUT_BYTES = 16 * 1024 * 1024
# Files a command harness runs rather than writes: one named but missing fails every task.
SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".sh", ".bash", ".rb", ".pl", ".php",
                   ".lua")
_FILE_SUFFIX = re.compile(r"\.[A-Za-z0-9]{1,5}$")


def _names_a_file(arg: str) -> bool:
    """An argument written as a file's name (a folder in it, or a suffix), not an option or
    a URL: a plain word such as a model name is never taken for a path."""
    return (not arg.startswith("-") and "://" not in arg
            and ("/" in arg or _FILE_SUFFIX.search(arg) is not None))


def anchored(args: list[str], start: str) -> list[str]:
    """``args`` with each relative name of a file or folder that exists under ``start`` made
    absolute: a person writes ``python3 research.py`` from where they start the connector,
    and the harness runs in a working folder of its own."""
    return [os.path.abspath(os.path.join(start, arg))
            if _names_a_file(arg) and not os.path.isabs(arg)
            and os.path.exists(os.path.join(start, arg)) else arg
            for arg in args]

def owner_only(path: str, flags: int) -> int:
    # not through a link a harness left in its place (to have us write elsewhere)
    return os.open(path, flags | os.O_NOFOLLOW, 0o600)


class HarnessFailed(Exception):
    """The harness ended without a usable result; ``reason`` is for the owner (unredacted)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class ResultUnreadable(HarnessFailed):
    """The harness finished but what it printed is no JSON object: it gets the same second
    chance as a result that breaks the rules."""


# Where a token is kept by default (and by every client snippet of the docs): never passed
# on, whichever variable --token-env names.
TOKEN_HOMES = ("XIA_CHEDAN_AGENT_TOKEN",)


def scrubbed_env(token: str, token_env: str) -> dict[str, str]:
    """The connector's environment without any Agent Token: its own, and another agent's
    kept beside it (``XIA_CHEDAN_AGENT_TOKEN`` while --token-env names another variable),
    which the harness could otherwise read and publish."""
    return outside_the_bundle({k: v for k, v in os.environ.items()
                               if k != token_env and k not in TOKEN_HOMES and token not in v
                               and not agent_tokens_in(v)
                               and not k.startswith("LOBBYTALKS_AGENT_")})


def outside_the_bundle(env: dict[str, str]) -> dict[str, str]:
    """The environment as it was before the single executable's launcher changed it: it
    points LD_LIBRARY_PATH at its unpacked libraries (older ones than the system's, built
    on the oldest supported system), which the harness's own curl, git or ssh would load,
    and sets _PYI_* for its own child, which a harness built with PyInstaller would take
    for its own. Run from an installed package, nothing changes."""
    if not getattr(sys, "frozen", False):
        return env
    env = {k: v for k, v in env.items() if not k.startswith("_PYI_") and k != "_MEIPASS2"}
    original = env.pop("LD_LIBRARY_PATH_ORIG", None)
    if original is None:
        env.pop("LD_LIBRARY_PATH", None)
    else:
        env["LD_LIBRARY_PATH"] = original
    return env


def tokens_in_environment() -> tuple[str, ...]:
    """Other agents' tokens in the connector's environment: a result holding one, even in
    disguise, is refused as one holding its own would be."""
    return tuple(sorted({t for v in os.environ.values() for t in agent_tokens_in(v)}))


@dataclass
class HarnessConfig:
    kind: str
    command: str = ""                     # for "command"
    claude_tools: str = DEFAULT_CLAUDE_TOOLS
    codex_sandbox: str = DEFAULT_CODEX_SANDBOX
    extra_args: list[str] = field(default_factory=list)
    start: str = field(default_factory=os.getcwd)  # where relative names in the command lead

    def executable(self) -> str:
        if self.kind == "command":
            parts = shlex.split(self.command)
            return parts[0] if parts else ""
        return self.kind

    def found(self, path: str | None) -> str | None:
        """Where the harness program is on ``path`` (the harness's own PATH), if anywhere."""
        program = self.executable()
        return shutil.which(program, path=path) if program else None

    def lacks_x_bit(self) -> bool:
        """Its program is named by a path to a file that is there but may not be run (a
        script never made executable): said so, rather than "not found"."""
        program = self.executable()
        return os.sep in program and os.path.isfile(program)

    def unusable(self, path: str | None) -> str | None:
        """Why the harness cannot be started now, if it cannot: its program is not on
        ``path`` (or not executable), or a script its command names is not there. Each
        question claimed meanwhile would fail, and use up its try."""
        program = self.executable()
        if self.found(path) is None:
            if self.lacks_x_bit():
                return f"the harness program {program} is not executable (chmod +x it, or " \
                       "name its interpreter first)"
            return (f"harness executable not found: {program or '(none)'} "
                    f"(PATH={path or ''}); give its folder in PATH or its full path")
        missing = self.missing_scripts()
        if missing:
            return (f"the harness command names a script that is not there: "
                    f"{', '.join(missing)} (relative names start from {self.start})")
        return None

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
        parts = shlex.split(self.command)
        return [*parts[:1], *anchored([*parts[1:], *self.extra_args], self.start)]

    def missing_scripts(self) -> list[str]:
        """The command's arguments that name a script to run that is not there."""
        if self.kind != "command":
            return []
        args = anchored([*shlex.split(self.command)[1:], *self.extra_args], self.start)
        return [arg for arg in args if _names_a_file(arg) and arg.endswith(SCRIPT_SUFFIXES)
                and not os.path.isfile(os.path.join(self.start, arg))]

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
        if not text.strip():  # its own message, not "not a JSON object"; the second chance too
            raise ResultUnreadable("codex wrote an empty last message" if self.kind == "codex"
                                   else "the harness printed nothing")
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


def _claude_error(envelope: dict[str, Any]) -> str:
    return f"claude reported an error: {str(envelope.get('result', '')).strip()[:300]}"


def _read(path: Path, missing: str) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_OUTPUT_BYTES)
    except OSError:
        raise HarnessFailed(missing) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:  # a mangled result: the harness gets the second chance
        raise ResultUnreadable("the output is not UTF-8 text") from None


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
