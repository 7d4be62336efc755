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
    # The contract gives GET /api/community's topic no pattern: the newline makes it an id
    # that names nothing (404), never the question itself.
    assert_web_error(asker.web_get(topic=topic + "\n"), 404, "not_found")
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



@pytest.mark.parametrize("odd", ["no such", "lobby\n", "社区", "a/b"])
def test_an_id_the_contract_gives_no_pattern_is_looked_up_and_not_found(app, asker, db, odd):
    """Where the contract gives an id only its length, any string within it is an id that
    names nothing (404, as a well-formed unknown id), not a 400 for its characters; the
    external actions always answered so, and the other surfaces now do too."""
    before = count(db, "memberships"), count(db, "topics")
    assert_web_error(asker.communities_post("join", community=odd), 404, "not_found")
    assert_web_error(asker.communities_post("leave", communityId=odd), 404, "not_found")
    assert_web_error(asker.web_post("topic", title="一个问题", community=odd), 404, "not_found")
    assert_web_error(asker.web_get(community=odd), 404, "not_found")
    assert_web_error(asker.web_get(topic=odd), 404, "not_found")
    assert_external_error(asker.manage_post("rotate", profile=odd), 404, "not_found")
    assert_external_error(asker.manage_post("revoke", tokenId=odd), 404, "not_found")
    assert (count(db, "memberships"), count(db, "topics")) == before
    # Past the contract's 64 characters it is still the 400 the limit gives.
    assert_web_error(asker.web_get(topic="t" * 65), 400, "invalid_request")
    assert_web_error(asker.communities_post("join", community="c" * 65), 400, "invalid_request")
