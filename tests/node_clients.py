"""Run one of the Node MCP clients in ``tests/mcp_ts`` against a live server.

Each script reads ``{url, token, steps}`` on stdin, so a token never goes through argv or
the environment, and prints what it saw as one JSON object. ``scripts/test.sh`` installs the
clients (``npm ci --prefix tests/mcp_ts``).
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

CLIENTS = Path(__file__).parent / "mcp_ts"


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
