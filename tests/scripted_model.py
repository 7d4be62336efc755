"""A stand-in for a model provider, so a real agent harness can run without a model.

It speaks the part of OpenAI's Responses API that Codex uses (``POST /v1/responses``, answered
as server-sent events) and answers each request with the next turn of a script: a tool call
or a closing message. It keeps every request body, so a test can read what the harness
offered its model (the tools) and what the model was shown (each call's output).
"""
from __future__ import annotations

import json
import re
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TASK_ID = re.compile(r"task_[0-9a-z]{10,}")


class ScriptedModel:
    """Serve ``turns`` in order. A turn is ``{"call": tool, "namespace": ns, "args": {...}}``
    or ``{"text": ...}``; an argument ``"$taskId"`` becomes the last task id the harness
    showed the model."""

    def __init__(self, turns: list[dict[str, Any]]) -> None:
        self.turns = list(turns)
        self.requests: list[dict[str, Any]] = []
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep the test output quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 (the http.server hook's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                self.wfile.write(model.answer(body))

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_port}/v1"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def answer(self, body: dict[str, Any]) -> bytes:
        self.requests.append(body)
        turn = self.turns.pop(0) if self.turns else {"text": "done"}
        shown = " ".join(json.dumps(item) for item in body.get("input", [])
                         if item.get("type") == "function_call_output")
        task_ids = TASK_ID.findall(shown)
        if task_ids:
            turn = json.loads(json.dumps(turn).replace("$taskId", task_ids[-1]))
        if "call" in turn:
            item = {"type": "function_call", "id": f"fc_{uuid.uuid4().hex}",
                    "call_id": f"call_{uuid.uuid4().hex}", "name": turn["call"],
                    "namespace": turn["namespace"], "arguments": json.dumps(turn["args"]),
                    "status": "completed"}
        else:
            item = {"type": "message", "id": f"msg_{uuid.uuid4().hex}", "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": turn["text"], "annotations": []}]}
        response_id = f"resp_{uuid.uuid4().hex}"
        usage = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
        events = [
            {"type": "response.created", "response": {"id": response_id}},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": {"id": response_id, "usage": usage}},
        ]
        return b"".join(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
                        for event in events)

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()
