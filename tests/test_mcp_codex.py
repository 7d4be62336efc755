"""OpenAI's Codex CLI (``@openai/codex``, its MCP client is the Rust ``rmcp``) against a real
``lobbytalks serve`` process.

Codex is configured with the command the developer docs give (``codex mcp add … --url …
--bearer-token-env-var``), in a throwaway ``CODEX_HOME``, and runs ``codex exec`` with a
scripted stand-in for its model (``scripted_model``): each turn makes one tool call, and
the test reads what Codex offered the model and what each call showed it. The token reaches
Codex the way the docs say, through the environment variable the config names.
``scripts/test.sh`` installs Codex with the other Node clients (``npm ci --prefix tests/mcp_ts``).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from conftest import LiveServer, good_result, open_database
from lobbytalks import mcp
from lobbytalks.actions import ACTIONS
from lobbytalks.settings import Settings
from node_clients import CLIENTS, refusal_in
from scripted_model import ScriptedModel
from test_mcp_sdk import ask_in_lobby, register_agent

CODEX = CLIENTS / "node_modules" / ".bin" / "codex"
TOKEN_ENV = "XIA_CHEDAN_AGENT_TOKEN"
SERVER_NAME = "xia-chedan"  # as in the docs' `codex mcp add`
NAMESPACE = "mcp__xia_chedan"  # what Codex makes of it for the model


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    live = LiveServer(tmp_path_factory.mktemp("mcp-codex") / "live")
    yield live
    live.stop()


def run_codex(server: LiveServer, token: str, turns: list[dict[str, Any]], home: Path
              ) -> tuple[ScriptedModel, subprocess.CompletedProcess]:
    """``codex exec`` once, its model playing ``turns``; returns the model and the run."""
    if not CODEX.exists():
        pytest.fail("Codex is missing: run `npm ci --prefix tests/mcp_ts` (scripts/test.sh does)")
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "CODEX_HOME": str(home / "codex"),
           TOKEN_ENV: token, "SCRIPTED_MODEL_KEY": "unused"}
    (home / "codex").mkdir(parents=True, exist_ok=True)
    model = ScriptedModel(turns)
    (home / "codex" / "config.toml").write_text(
        f'model = "scripted"\nmodel_provider = "scripted"\napproval_policy = "never"\n\n'
        f'[model_providers.scripted]\nname = "scripted"\nbase_url = "{model.url}"\n'
        f'wire_api = "responses"\nenv_key = "SCRIPTED_MODEL_KEY"\n', encoding="utf-8")
    subprocess.run([str(CODEX), "mcp", "add", SERVER_NAME, "--url",
                    server.url + "/api/external/mcp", "--bearer-token-env-var", TOKEN_ENV],
                   env=env, check=True, capture_output=True, timeout=60)
    command = [str(CODEX), "exec", "--skip-git-repo-check", "-C", str(home),
               "Answer one open question in the community."]
    # Its own session: the npm wrapper starts the real binary as a child, and a timeout has
    # to stop both.
    codex = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = codex.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        os.killpg(codex.pid, signal.SIGKILL)
        stdout, stderr = codex.communicate()
    finally:
        model.close()
    assert codex.returncode == 0, stderr[-3000:]
    return model, subprocess.CompletedProcess(command, codex.returncode, stdout, stderr)


def call(tool: str, **args: Any) -> dict[str, Any]:
    return {"call": tool, "namespace": NAMESPACE, "args": args}


def shown(model: ScriptedModel) -> list[str]:
    """What each tool call showed the model, after Codex's ``Output:`` line."""
    outputs = [item["output"] for item in model.requests[-1]["input"]
               if item["type"] == "function_call_output"]
    texts = [out if isinstance(out, str) else "\n".join(part["text"] for part in out)
             for out in outputs]
    return [text.split("Output:", 1)[1].strip() for text in texts]


def offered(model: ScriptedModel) -> dict[str, Any]:
    """The tool namespace Codex offered its model for this server, if any."""
    return next((tool for tool in model.requests[0]["tools"] if tool.get("name") == NAMESPACE), {})


def test_codex_offers_its_model_the_nine_tools(server, tmp_path):
    _, token = register_agent(server, "Codex 虾")
    model, _ = run_codex(server, token, [{"text": "nothing to do"}], tmp_path)
    namespace = offered(model)
    listed = {tool["name"]: tool for tool in mcp.tools("2025-06-18", Settings.load(env={}))}
    assert [tool["name"] for tool in namespace["tools"]] == sorted(ACTIONS)
    # The server's instructions introduce the namespace; each tool keeps our description,
    # which states the limits that Codex leaves out of the schemas it passes on.
    assert namespace["description"] == mcp.INSTRUCTIONS
    for tool in namespace["tools"]:
        assert tool["description"] == listed[tool["name"]]["description"]
        ours = listed[tool["name"]]["inputSchema"]
        assert tool["parameters"].get("required", []) == ours.get("required", [])
        assert sorted(tool["parameters"]["properties"]) == sorted(ours["properties"])


def test_codex_runs_the_whole_claim_cycle(server, tmp_path):
    topic = ask_in_lobby(server)
    _, token = register_agent(server, "Codex 答题虾")
    model, done = run_codex(server, token, [
        call("join_community", community="lobby"),
        call("claim_task", topic=topic, requestId=str(uuid.uuid4())),
        call("heartbeat", taskId="$taskId"),
        call("submit_result", taskId="$taskId", **good_result()),
        call("get_task_status", taskId="$taskId"),
        call("get_context", topic=topic),
        {"text": "answered"},
    ], tmp_path)
    joined, claim, beat, submit, status, context = (json.loads(text) for text in shown(model))
    assert joined == {"ok": True, "id": "lobby", "joined": True}
    assert claim["task"]["state"] == beat["task"]["state"] == "leased"
    assert submit["task"]["state"] == status["task"]["state"] == "done"
    assert context["allowed"] is True and submit["messageId"] in [m["id"] for m in context["messages"]]
    with open_database(server.data_dir) as db:
        stored = db.one("SELECT state, message_id FROM tasks WHERE id = :id",
                        {"id": claim["task"]["id"]})
    assert tuple(stored) == ("done", submit["messageId"])
    assert token not in done.stdout + done.stderr


def test_codex_shows_its_model_every_refusal_with_its_code(server, tmp_path):
    topic = ask_in_lobby(server)
    _, token = register_agent(server, "Codex 被拒虾")
    model, _ = run_codex(server, token, [
        call("claim_task", topic=topic, requestId=str(uuid.uuid4())),  # not a member yet
        call("get_context", topic="no-such-topic"),
        call("heartbeat", taskId=7),
        {"text": "refused"},
    ], tmp_path)
    assert [refusal_in(text) for text in shown(model)] == [
        (403, "forbidden"), (404, "not_found"), (400, "invalid_request")]


def test_codex_with_a_wrong_token_offers_no_tools_and_says_why(server, tmp_path):
    model, done = run_codex(server, "lbt_" + "x" * 43, [{"text": "no tools"}], tmp_path)
    assert offered(model) == {}
    assert 'error=\\"invalid_token\\"' in done.stderr or 'error="invalid_token"' in done.stderr
