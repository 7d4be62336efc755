"""One access-log line per request, and nothing secret in it."""
from __future__ import annotations

import json
import time
from urllib.parse import quote

import pytest
from hypothesis import given, strategies as st

from lobbytalks import accesslog, create_app

from conftest import Person

SECRET_PASSWORD = "hunter2 correct horse"
PRIVATE = "服务器 root 密码是 tr0ub4dor"


def lines(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.strip()]


@pytest.fixture
def logged(settings):
    def make(**overrides):
        return create_app(settings.with_overrides(access_log=True, **overrides))
    return make


def test_each_request_gets_one_plain_line_with_ids_and_no_secrets(logged, capsys):
    app = logged()
    alice = Person(app, username="alice", password=SECRET_PASSWORD).register()
    alice.join()
    topic = alice.ask(privateContext=PRIVATE)
    agent = alice.new_agent()
    cookie = alice.http.get_cookie("xia_session").value
    capsys.readouterr()

    assert alice.web_post("login", username="alice", password=SECRET_PASSWORD).status_code == 200
    assert agent.get("get_context", topic=topic).status_code == 200
    r = alice.http.get(f"/api/community?topic={topic}&token={agent.token}&q=%0Afake")
    assert r.status_code == 200 and PRIVATE in r.get_data(as_text=True)  # the asker reads it
    app.test_client().get("/healthz")
    out = lines(capsys)

    assert len(out) == 4, out
    login, context, query, health = out
    user_id = app.config["LOBBYTALKS"].db.one("SELECT id FROM users WHERE username='alice'")[0]
    assert " POST /api/community 200 " in login and "user=- agent=-" in login
    assert " GET /api/external?action=get_context&topic=* 200 " in context
    assert f"user={user_id} agent={agent.profile_id}" in context
    assert " GET /api/community?topic=*&token=*&q=* 200 " in query
    assert f"user={user_id} agent=-" in query
    assert health.split()[1:5] == ["127.0.0.1", "GET", "/healthz", "200"]
    assert health.endswith("ms user=- agent=-")
    text = "\n".join(out)
    for secret in (SECRET_PASSWORD, agent.token, cookie, PRIVATE, "fake"):
        assert secret not in text


def test_json_lines(logged, capsys):
    app = logged(log_format="json")
    person = Person(app, password=SECRET_PASSWORD).register()
    agent = person.new_agent()
    capsys.readouterr()
    r = agent.get("list_communities", cursor="abc")
    app.test_client().get("/no/such/page")
    first, second = (json.loads(line) for line in lines(capsys))
    assert set(first) == {"time", "client", "method", "path", "query", "status", "ms",
                          "user", "agent"}
    assert first["method"] == "GET" and first["path"] == "/api/external"
    assert first["query"] == "action=list_communities&cursor=*"
    assert first["status"] == r.status_code
    assert first["agent"] == agent.profile_id and isinstance(first["user"], int)
    assert isinstance(first["ms"], float) and first["ms"] >= 0
    assert second["status"] == 404 and second["user"] is None and second["agent"] is None
    assert agent.token not in json.dumps([first, second])


def test_off_means_no_lines(settings, capsys):
    app = create_app(settings.with_overrides(access_log=False))
    app.test_client().get("/healthz")
    assert lines(capsys) == []


def test_control_characters_cannot_forge_lines(logged, capsys):
    app = logged()
    capsys.readouterr()
    app.test_client().get("/x%0A2026-01-01T00:00:00Z 1.2.3.4 GET /admin 200")
    (line,) = lines(capsys)
    assert line.split()[3] == "/x%0A2026-01-01T00:00:00Z%201.2.3.4%20GET%20/admin%20200"
    assert line.split()[4] == "404"


def test_paths_and_parameter_names_cannot_forge_fields(logged, capsys):
    app = logged()
    capsys.readouterr()
    app.test_client().get("/healthz%20200%200.1ms%20user=1?a%20b%3F%26c=1&%25=2")
    (line,) = lines(capsys)
    fields = line.split()
    assert len(fields) == 8, fields
    assert fields[3] == "/healthz%20200%200.1ms%20user%3D1?a%20b%3F%26c=*&%25=*"
    assert fields[4] == "404" and fields[6:] == ["user=-", "agent=-"]


def test_a_token_in_the_path_or_a_parameter_name_is_masked(logged, capsys):
    """A client misconfigured to put its token in the URL: the path and the parameter names
    are the text the log shows, so anything shaped like a token is masked there."""
    app = logged()
    agent = Person(app).register().new_agent()
    session_like = "Zq3" * 15  # 45 characters: as long as a session id or an API key
    capsys.readouterr()
    client = app.test_client()
    client.get(f"/api/external/{agent.token}")
    client.post(f"/api/external/mcp;{agent.token}")
    client.get(f"/api/external?action=list_topics&{agent.token}=1&x{agent.token}y=2")
    client.get(f"/q/{'LBT' + agent.token[3:]}")
    client.get(f"/docs/{session_like}")
    client.get("/q/t_0horsft0mwmnvi99v04r?cursor=abc")  # ids are not secrets: kept
    out = lines(capsys)
    assert len(out) == 6, out
    body = agent.token[4:]
    for line in out:
        assert body[:12] not in line and body[-12:] not in line and session_like not in line
    assert [line.split()[3] for line in out] == [
        "/api/external/(redacted)", "/api/external/mcp;(redacted)",
        "/api/external?action=list_topics&(redacted)=*&(redacted)=*",
        "/q/(redacted)", "/docs/(redacted)", "/q/t_0horsft0mwmnvi99v04r?cursor=*"]


def test_redacted_query_keeps_names_only():
    assert accesslog.redacted_query("") == ""
    assert accesslog.redacted_query("action=claim_task&token=abc&password=x") == \
        "action=claim_task&token=*&password=*"
    assert accesslog.redacted_query("action=DROP%20TABLE") == "action=*"


@given(st.text(max_size=40))
def test_a_field_is_percent_encoded_exactly_as_quote_does(text):
    """The shortcut for fields quote would leave alone changes no field."""
    assert accesslog._clean(text) == quote(text, safe=accesslog._SAFE_IN_FIELD)


def _utc_second_now() -> str:
    # From time.time(), as the log reads it: time.gmtime() without an argument reads the C
    # library's coarser clock, which can still show the previous second just after a tick.
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(time.time())))


def test_the_time_field_is_the_current_utc_second():
    before = _utc_second_now()
    stamp = accesslog._utc_stamp()
    after = _utc_second_now()
    assert stamp in (before, after)


def test_a_handler_added_to_the_logger_gets_each_line_as_a_record(logged, capsys):
    import logging

    app = logged()
    records: list[logging.LogRecord] = []
    catcher = logging.Handler()
    catcher.emit = records.append  # type: ignore[method-assign]
    accesslog.logger.addHandler(catcher)
    try:
        app.test_client().get("/healthz")
    finally:
        accesslog.logger.removeHandler(catcher)
    assert [r.getMessage().split()[2:5] for r in records] == [["GET", "/healthz", "200"]]
    assert "GET /healthz 200" in capsys.readouterr().err  # and stderr still has it
    app.test_client().get("/healthz")
    assert len(records) == 1  # back to the direct write once it is gone
