"""A stand-in for a model provider, so a real agent harness can run without a model.

It speaks the two wire formats the harnesses under test use, each answered as server-sent
events: OpenAI's Responses API (``POST /v1/responses``, Codex) and Anthropic's Messages API
(``POST /v1/messages``, Claude Code). Every request that offers tools gets the next turn of
a script: one tool call, or a closing message. It keeps those requests, so a test can read
what the harness offered its model (the tools) and what each call showed it (the outputs).
"""
from __future__ import annotations

import json
import re
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TASK_ID = re.compile(r"task_[0-9a-z]{10,}")


def call(tool: str, **args: Any) -> dict[str, Any]:
    """A turn that calls ``tool`` (as the harness names it to the model) with ``args``."""
    return {"call": tool, "args": args}


def _text_of(content: Any) -> str:
    """A tool output as the model reads it: a string, or text parts joined."""
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content)


class _Responses:
    """OpenAI's Responses API, as Codex calls it."""

    @staticmethod
    def outputs(body: dict[str, Any]) -> list[str]:
        return [_text_of(item["output"]) for item in body.get("input", [])
                if item.get("type") == "function_call_output"]

    @staticmethod
    def events(turn: dict[str, Any], body: dict[str, Any]) -> list[dict[str, Any]]:
        if "call" in turn:
            # Codex offers an MCP server's tools as one namespace: "mcp__<server>__<tool>"
            # is called as <tool> within "mcp__<server>".
            namespace, _, tool = turn["call"].rpartition("__")
            item = {"type": "function_call", "id": f"fc_{uuid.uuid4().hex}",
                    "call_id": f"call_{uuid.uuid4().hex}", "name": tool, "namespace": namespace,
                    "arguments": json.dumps(turn["args"]), "status": "completed"}
        else:
            item = {"type": "message", "id": f"msg_{uuid.uuid4().hex}", "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": turn["text"], "annotations": []}]}
        response = {"id": f"resp_{uuid.uuid4().hex}"}
        usage = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
        return [{"type": "response.created", "response": response},
                {"type": "response.output_item.done", "output_index": 0, "item": item},
                {"type": "response.completed", "response": {**response, "usage": usage}}]


class _Messages:
    """Anthropic's Messages API, as Claude Code calls it."""

    @staticmethod
    def outputs(body: dict[str, Any]) -> list[str]:
        return [_text_of(block["content"]) for message in body.get("messages", [])
                if isinstance(message.get("content"), list)
                for block in message["content"] if block.get("type") == "tool_result"]

    @staticmethod
    def events(turn: dict[str, Any], body: dict[str, Any]) -> list[dict[str, Any]]:
        if "call" in turn:
            block = {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex}", "name": turn["call"],
                     "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(turn["args"])}
            stop = "tool_use"
        else:
            block, delta, stop = {"type": "text", "text": ""}, {
                "type": "text_delta", "text": turn["text"]}, "end_turn"
        message = {"id": f"msg_{uuid.uuid4().hex}", "type": "message", "role": "assistant",
                   "model": body.get("model", "scripted"), "content": [], "stop_reason": None,
                   "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
        return [{"type": "message_start", "message": message},
                {"type": "content_block_start", "index": 0, "content_block": block},
                {"type": "content_block_delta", "index": 0, "delta": delta},
                {"type": "content_block_stop", "index": 0},
                {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                 "usage": {"output_tokens": 1}},
                {"type": "message_stop"}]


class ScriptedModel:
    """Serve ``turns`` in order to the requests that offer tools; an argument ``"$taskId"``
    becomes the last task id a tool output showed the model."""

    def __init__(self, turns: list[dict[str, Any]]) -> None:
        self.turns = list(turns)
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep the test output quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 (the http.server hook's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
                path = self.path.split("?", 1)[0]
                if path.endswith("/count_tokens"):
                    self._send("application/json", json.dumps({"input_tokens": 1}).encode())
                    return
                wire = _Responses if path.endswith("/responses") else _Messages
                events = wire.events(model.next_turn(body, wire), body)
                self._send("text/event-stream", b"".join(
                    f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
                    for event in events))

            def _send(self, content_type: str, data: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.http.server_port}"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def next_turn(self, body: dict[str, Any], wire: Any) -> dict[str, Any]:
        if not body.get("tools"):  # a side request (a title, a summary): not the agent's loop
            return {"text": "ok"}
        with self._lock:
            self.requests.append({**body, "_outputs": wire.outputs(body)})
            turn = self.turns.pop(0) if self.turns else {"text": "done"}
        task_ids = TASK_ID.findall(" ".join(wire.outputs(body)))
        if task_ids:
            turn = json.loads(json.dumps(turn).replace("$taskId", task_ids[-1]))
        return turn

    def shown(self) -> list[str]:
        """What each tool call showed the model, in order, as of the last request."""
        return self.requests[-1]["_outputs"] if self.requests else []

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()
