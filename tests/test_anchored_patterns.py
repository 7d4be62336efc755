"""A value with a trailing newline never passes a pattern.

Python's ``$`` also matches just before a final ``\\n``, so ``re.match(r"^[a-z]+$", "zzz\\n")``
succeeds: before every check used ``fullmatch``, "zzz\\n" registered as a second account that
looks exactly like "zzz", and ids with a newline got 404 or 200 instead of the spec's 400.
"""
from __future__ import annotations

import pytest

from conftest import Person, count
from helpers import assert_external_error, assert_web_error
from lobbytalks.models.common import Text


@pytest.mark.parametrize("value", ["zzz\n", "zzz\r\n", "\nzzz", "zz\nz"])
def test_a_pattern_refuses_a_newline_anywhere(value):
    from pydantic import TypeAdapter, ValidationError
    username = TypeAdapter(Text(3, 24, pattern=r"^[a-zA-Z0-9_]+$"))
    assert username.validate_python("zzz") == "zzz"
    with pytest.raises(ValidationError):
        username.validate_python(value)


def test_a_username_with_a_trailing_newline_is_refused(app, db):
    Person(app, username="zzz").register()
    twin = Person(app, username="zzz\n")
    r = twin.web_post("register", username=twin.username, password=twin.password)
    assert_web_error(r, 400, "invalid_request")
    assert count(db, "users") == 1


def test_ids_with_a_trailing_newline_are_400(app, asker):
    topic = asker.ask()
    agent = asker.new_agent()
    assert_web_error(asker.http.get("/api/communities?id=lobby%0A"), 400, "invalid_request")
    assert_web_error(asker.web_get(topic=topic + "\n"), 400, "invalid_request")
    r = asker.manage_get(action="tasks", topic="abc\n")
    assert_external_error(r, 400, "invalid_request")
    r = asker.manage_post("cancel_task", taskId="task_x\n")
    assert_external_error(r, 400, "invalid_request")
    r = asker.manage_post("update", profile=agent.profile_id + "\n", name="新名字")
    assert_external_error(r, 400, "invalid_request")


def test_pages_treat_a_trailing_newline_as_no_such_thing(app, asker):
    topic = asker.ask()
    assert asker.http.get(f"/u/{asker.username}").status_code == 200
    assert asker.http.get(f"/u/{asker.username}%0A").status_code == 404
    assert asker.http.get(f"/q/{topic}%0A").status_code == 404
    assert asker.http.get("/c/lobby%0A").status_code == 404

