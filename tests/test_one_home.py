"""Small things defined once: what the pages, the docs and the models say comes from one place."""
from __future__ import annotations

import json

from lobbytalks.blueprints.web_developers import TOKEN_ENV, claude_config
from lobbytalks.connector.commands import DEFAULT_TOKEN_ENV
from lobbytalks.models.common import ID, TASK_STATES
from lobbytalks.models.external import TaskFilters
from lobbytalks.security import new_id


def test_the_protocol_doc_and_the_developers_page_show_one_claude_config(client):
    doc = client.get("/docs/external-agents-v1.md").get_data(as_text=True)
    page = client.get("/developers?lang=en").get_data(as_text=True)
    configs = [json.loads(line) for line in doc.splitlines() if line.startswith('{"mcpServers"')]
    expected = claude_config("http://localhost")
    assert configs == [expected, expected]
    assert "{{" not in doc
    assert f"Bearer ${{{TOKEN_ENV}}}" in page and TOKEN_ENV == DEFAULT_TOKEN_ENV
    assert TOKEN_ENV in doc


def test_the_id_rule_accepts_what_the_server_makes():
    assert ID.match(new_id("task")) and ID.match("a" * 64)
    assert not ID.match("a" * 65) and not ID.match("bad id") and not ID.match("")


def test_the_task_state_filter_and_the_states_are_one_list():
    schema = TaskFilters.model_json_schema()["properties"]["state"]
    listed = next(option["enum"] for option in schema["anyOf"] if "enum" in option)
    assert tuple(listed) == TASK_STATES

