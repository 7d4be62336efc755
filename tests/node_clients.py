"""The real MCP clients in ``tests/mcp_ts`` against a live server, and what their tests share.

A client script (``run_client``) reads ``{url, token, steps}`` on stdin, so a token never
goes through argv or the environment, and prints what it saw as one JSON object. A harness
CLI (``run_harness``: Codex, Claude Code) gets the token as its users configure it, through
the environment variable its config names. ``scripts/test.sh`` installs them all
(``npm ci --prefix tests/mcp_ts``).
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from conftest import good_result, open_database
from lobbytalks import mcp
from lobbytalks.settings import Settings
from scripted_model import call

CLIENTS = Path(__file__).parent / "mcp_ts"


def our_tools() -> dict[str, dict[str, Any]]:
    """The tools as this server lists them to a client of 2025-06-18 (what the clients
    under test negotiate), by name."""
    return {tool["name"]: tool for tool in mcp.tools("2025-06-18", Settings.load(env={}))}


def run_client(script: str, package: str, url: str, token: str,
               steps: list[list[Any]]) -> dict[str, Any]:
    """Run ``tests/mcp_ts/<script>``, which needs the npm ``package``, through ``steps``."""
    node = shutil.which("node")
    if node is None or not (CLIENTS / "node_modules" / package).is_dir():
        pytest.fail(f"{package} is missing: run `npm ci --prefix tests/mcp_ts` "
                    "(scripts/test.sh does)")
    request = {"url": url + "/api/external/mcp", "token": token, "steps": steps}
    done = subprocess.run([node, str(CLIENTS / script)], input=json.dumps(request),
                          capture_output=True, text=True, timeout=90, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def refusal_in(text: str) -> tuple[int, str]:
    """(status, code) of a refusal the client read as text: ``{code, error, status}``."""
    payload = json.loads(text)
    assert set(payload) == {"code", "error", "status"} and payload["error"], payload
    return payload["status"], payload["code"]


def run_harness(command: list[str], env: dict[str, str], timeout: float = 180
                ) -> subprocess.CompletedProcess:
    """Run an agent harness's CLI to the end. It gets its own session: an npm wrapper may
    start the real binary as a child, and a timeout has to stop both."""
    process = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
    assert process.returncode == 0, stderr[-3000:]
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def claim_cycle(tool: str, topic: str) -> list[dict[str, Any]]:
    """A scripted model's whole answer to ``topic``: join, claim, heartbeat, submit, check,
    read. ``tool`` is how the harness names a tool to its model, ``{}`` for the tool."""
    return [
        call(tool.format("join_community"), community="lobby"),
        call(tool.format("claim_task"), topic=topic, requestId=str(uuid.uuid4())),
        call(tool.format("heartbeat"), taskId="$taskId"),
        call(tool.format("submit_result"), taskId="$taskId", **good_result()),
        call(tool.format("get_task_status"), taskId="$taskId"),
        call(tool.format("get_context"), topic=topic),
        {"text": "answered"},
    ]


def check_claim_cycle(data_dir: Path, shown: list[str]) -> None:
    """What ``claim_cycle``'s calls showed the model, and what the server stored."""
    joined, claim, beat, submit, status, context = (json.loads(text) for text in shown)
    assert joined == {"ok": True, "id": "lobby", "joined": True}
    assert claim["task"]["state"] == beat["task"]["state"] == "leased"
    assert submit["task"]["state"] == status["task"]["state"] == "done"
    assert context["allowed"] is True
    assert submit["messageId"] in [m["id"] for m in context["messages"]]
    assert_stored_done(data_dir, claim["task"]["id"], submit["messageId"])


def assert_stored_done(data_dir: Path, task_id: str, message_id: str) -> None:
    """The server's own database holds the task as done, with the message it stored."""
    with open_database(data_dir) as db:
        stored = db.one("SELECT state, message_id FROM tasks WHERE id = :id", {"id": task_id})
    assert tuple(stored) == ("done", message_id)
