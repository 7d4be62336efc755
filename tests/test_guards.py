"""Request guards shared by every /api/ surface: Origin, cross-site, media type, size, JSON."""
from __future__ import annotations

import io

import pytest
from werkzeug.wrappers import Request

from helpers import assert_external_error, assert_web_error
from lobbytalks.errors import ApiError
from lobbytalks.guards import read_json

WEB_POSTS = [("/api/community", {"action": "login", "username": "nobody", "password": "x" * 10}),
             ("/api/communities", {"action": "join", "community": "lobby"})]


def test_foreign_origin_rejected_on_external(agent, db):
    r = agent.http.post("/api/external", json={"action": "join_community", "community": "lobby"},
                        headers={**agent.headers, "Origin": "https://evil.example.org"})
    assert_external_error(r, 403, "forbidden_origin")


def test_same_origin_accepted_on_external(agent):
    r = agent.http.get("/api/external?action=list_topics",
                       headers={**agent.headers, "Origin": "http://localhost"})
    assert r.status_code == 200


@pytest.mark.parametrize("path,body", WEB_POSTS)
def test_foreign_origin_rejected_on_web(client, path, body):
    r = client.post(path, json=body, headers={"Origin": "https://evil.example.org"})
    assert_web_error(r, 403)


def test_public_url_decides_the_origin(app):
    from lobbytalks import create_app
    other = create_app(app.config["LOBBYTALKS"].settings, public_url="https://talk.example.org")
    c = other.test_client()
    body = {"action": "login", "username": "nobody", "password": "x" * 10}
    assert c.post("/api/community", json=body,
                  headers={"Origin": "http://localhost"}).status_code == 403
    assert c.post("/api/community", json=body,
                  headers={"Origin": "https://talk.example.org"}).status_code == 401


@pytest.mark.parametrize("public_url, origin, allowed", [
    # a browser leaves the scheme's default port out of its Origin
    ("http://127.0.0.1:80", "http://127.0.0.1", True),
    ("https://talk.example.org:443", "https://talk.example.org", True),
    ("https://talk.example.org:0443/", "https://TALK.example.org", True),
    ("https://talk.example.org", "https://talk.example.org:443", True),
    ("https://talk.example.org:8443", "https://talk.example.org:8443", True),
    ("https://[::1]:443", "https://[::1]", True),
    ("https://talk.example.org:8443", "https://talk.example.org", False),
    ("https://talk.example.org", "http://talk.example.org", False),
    ("https://talk.example.org", "null", False),
    ("https://talk.example.org", "https://talk.example.org:99999", False),
    # a name or an address written otherwise than browsers write it
    ("https://虾扯淡.example.org", "https://xn--lqus8wb1t.example.org", True),
    ("http://[0:0:0:0:0:0:0:1]:8000", "http://[::1]:8000", True),
    # browsers write IDNs by UTS 46, where Python's IDNA 2003 codec makes ß into ss
    ("https://straße.example", "https://xn--strae-oqa.example", True),
    ("https://ςigma.example", "https://xn--igma-fod.example", True),
    ("https://straße.example", "https://strasse.example", False),
    # what no browser sends as an Origin
    ("https://talk.example.org", "https://x@talk.example.org", False),
    ("https://talk.example.org", "https://talk.example.org/path", False),
    ("https://talk.example.org", " https://talk.example.org", False),
    ("https://talk.example.org", "https://talk.example.org?x", False),
])
def test_the_origin_rule_reads_ports_as_browsers_write_them(app, public_url, origin, allowed):
    """A PUBLIC_URL with its default port written out refused every browser's write: the
    Origin a browser sends has none."""
    from lobbytalks import create_app
    other = create_app(app.config["LOBBYTALKS"].settings, public_url=public_url)
    r = other.test_client().post("/api/community", headers={"Origin": origin}, json={
        "action": "login", "username": "nobody", "password": "x" * 10})
    assert r.status_code == (401 if allowed else 403), r.get_json()


@pytest.mark.parametrize("path,body", WEB_POSTS)
def test_cross_site_fetch_rejected_on_web_writes(client, path, body):
    r = client.post(path, json=body, headers={"Sec-Fetch-Site": "cross-site"})
    assert_web_error(r, 403)


def test_cross_site_fetch_rejected_on_external(agent):
    r = agent.http.get("/api/external?action=list_topics",
                       headers={**agent.headers, "Sec-Fetch-Site": "cross-site"})
    assert_external_error(r, 403, "forbidden_origin")


@pytest.mark.parametrize("query", ["", "?action=tasks"])
def test_cross_site_reads_of_the_manage_api_are_refused(person, query):
    """The manage API is one of the external surfaces, which refuse cross-site calls for
    reads as well: a page elsewhere gets neither the agent list nor the task list."""
    r = person.http.get("/api/external/manage" + query, headers={"Sec-Fetch-Site": "cross-site"})
    assert_external_error(r, 403, "forbidden_origin")
    assert person.http.get("/api/external/manage" + query,
                           headers={"Sec-Fetch-Site": "same-origin"}).status_code == 200


def test_same_site_fetch_allowed(person):
    r = person.http.post("/api/communities", json={"action": "join", "community": "lobby"},
                         headers={"Sec-Fetch-Site": "same-origin"})
    assert r.status_code == 200


def test_external_requires_json_media_type(agent):
    r = agent.http.post("/api/external", data="action=join_community", headers={
        **agent.headers, "Content-Type": "application/x-www-form-urlencoded"})
    assert_external_error(r, 415, "unsupported_media_type")


def test_json_with_charset_is_accepted(agent):
    r = agent.http.post("/api/external", data=b'{"action":"join_community","community":"lobby"}',
                        headers={**agent.headers, "Content-Type": "application/json; charset=utf-8"})
    assert r.status_code == 200


@pytest.mark.parametrize("path,body", WEB_POSTS)
def test_web_requires_json_media_type(client, path, body):
    r = client.post(path, data="x", headers={"Content-Type": "text/plain"})
    assert_web_error(r, 415)


def test_external_body_over_64_kib(agent, db):
    big = {"action": "fail_task", "taskId": "t", "error": "x" * (64 * 1024)}
    r = agent.http.post("/api/external", json=big, headers=agent.headers)
    assert_external_error(r, 413, "payload_too_large")


def test_communities_body_over_4_kib(person, db):
    r = person.communities_post("create", name="大社区", description="说" * 2000)
    assert_web_error(r, 413)
    assert db.value("SELECT COUNT(*) FROM communities") == 1


@pytest.mark.parametrize("raw", [b"{", b"not json", b"\xff\xfe"])
def test_malformed_json_external(agent, raw):
    r = agent.http.post("/api/external", data=raw,
                        headers={**agent.headers, "Content-Type": "application/json"})
    assert_external_error(r, 400, "invalid_json")


@pytest.mark.parametrize("raw", [
    b'{"action":"join_community","community":"nope","community":"lobby"}',
    b'{"action":"join_community","community" :"nope",\n "community"\t: "lobby"}',
    b'{"action":"join_community","community":"lobby","x":[{"k":1,"k":1}]}',  # nested, equal
])
def test_a_key_named_twice_is_invalid_json_on_rest_and_mcp(agent, raw):
    """The last copy won ("nope" then "lobby": joined), where a proxy or client reading the
    first would have seen another request."""
    r = agent.http.post("/api/external", data=raw,
                        headers={**agent.headers, "Content-Type": "application/json"})
    body = assert_external_error(r, 400, "invalid_json")
    assert body["error"] == "JSON 对象里有重复的键"
    r = agent.http.post("/api/external/mcp", data=b'{"jsonrpc":"2.0","id":1,"id":2,'
                        b'"method":"tools/list"}', headers={
                            **agent.headers, "Content-Type": "application/json",
                            "Accept": "application/json, text/event-stream"})
    assert r.status_code == 400 and r.get_json()["id"] is None, r.get_json()
    assert r.get_json()["error"]["data"] == {"code": "invalid_json", "status": 400}


@pytest.mark.parametrize("text", ['he said \":\" twice', '"k":1,"k":2', '\"a\" : b'])
def test_a_string_holding_what_looks_like_keys_is_no_repeat(agent, text):
    r = agent.http.post("/api/external", json={"action": "list_topics", "community": text},
                        headers=agent.headers)
    assert r.get_json()["code"] != "invalid_json", r.get_json()


def test_malformed_json_web(client):
    r = client.post("/api/community", data=b"{oops", headers={"Content-Type": "application/json"})
    assert_web_error(r, 400)


def test_json_array_body_is_invalid_request(agent):
    r = agent.http.post("/api/external", json=[1, 2], headers=agent.headers)
    assert_external_error(r, 400, "invalid_request")


@pytest.mark.parametrize("body", [{}, {"action": "drop_tables"}, {"action": 5}])
def test_unknown_action_external(agent, body):
    r = agent.http.post("/api/external", json=body, headers=agent.headers)
    assert_external_error(r, 400, "unknown_action")


@pytest.mark.parametrize("path", ["/api/community", "/api/communities"])
def test_unknown_action_web(person, path):
    r = person.http.post(path, json={"action": "teleport"})
    assert_web_error(r, 400)


def test_a_web_action_sent_with_the_other_method_is_405(person):
    """A read posted, or a write asked for with GET: not "unknown", the wrong method."""
    for r in (person.http.get("/api/community?action=change_password"),
              person.http.post("/api/community", json={"action": "me"})):
        assert_web_error(r, 405, "method_not_allowed")
    assert person.http.get("/api/community?action=me").status_code == 200


def test_json_responses_are_never_cached(client):
    for path in ("/api/communities", "/api/community?action=islands", "/healthz"):
        r = client.get(path)
        assert r.headers["Cache-Control"] == "no-store", path


def test_security_headers_everywhere(client):
    r = client.get("/api/communities")
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    assert r.headers["X-Frame-Options"] == "DENY"


@pytest.mark.parametrize("path", ["/api/communities", "/api/community?action=islands",
                                  "/api/external/manage", "/api/external?action=list_topics"])
def test_foreign_origin_rejected_on_reads_too(client, path):
    r = client.get(path, headers={"Origin": "https://evil.example.org"})
    assert r.status_code == 403


def test_internal_failures_are_503_without_internals(agent, monkeypatch):
    from lobbytalks.db import DatabaseError  # the backend's own error class, whichever it is
    from lobbytalks.services import communities

    def broken(*args, **kwargs):
        raise DatabaseError("disk I/O error at /secret/path")

    monkeypatch.setattr(communities, "list_page", broken)
    r = agent.get("list_communities")
    body = assert_external_error(r, 503, "service_unavailable")
    assert "/secret/path" not in body["error"]


@pytest.mark.parametrize("content_type", ["Application/JSON", " application/json ; charset=UTF-8",
                                          "application/json;v=1"])
def test_media_type_is_read_without_case_or_parameters(agent, content_type):
    r = agent.http.post("/api/external", data=b'{"action":"join_community","community":"lobby"}',
                        headers={**agent.headers, "Content-Type": content_type})
    assert r.status_code == 200


@pytest.mark.parametrize("content_type", ["application/jsonx", "application/json-patch+json",
                                          "text/json", ""])
def test_near_json_media_types_are_refused(agent, content_type):
    r = agent.http.post("/api/external", data=b'{"action":"join_community","community":"lobby"}',
                        headers={**agent.headers, "Content-Type": content_type})
    assert_external_error(r, 415, "unsupported_media_type")


def _environ_with_body(raw: bytes, **extra):
    return {"CONTENT_TYPE": "application/json", "wsgi.input": io.BytesIO(raw), **extra}


@pytest.mark.parametrize("environ,expected", [
    # A server that ends the input itself (waitress): read to its end, whatever the length.
    (_environ_with_body(b'{"a":1}', **{"wsgi.input_terminated": True}), {"a": 1}),
    # Otherwise exactly Content-Length, never past it (more may follow on the connection).
    (_environ_with_body(b'{"a":2}{"next":"request"}', CONTENT_LENGTH="7"), {"a": 2}),
])
def test_body_is_read_as_the_server_frames_it(app, environ, expected):
    assert read_json(Request(environ), 100) == expected


@pytest.mark.parametrize("environ,code", [
    # Neither an ended input nor a length: nothing is read (it could block), so no JSON.
    (_environ_with_body(b'{"a":1}'), "invalid_json"),
    # A chunked body under a server that does not end the input: the same.
    (_environ_with_body(b'{"a":1}', HTTP_TRANSFER_ENCODING="chunked", CONTENT_LENGTH="7"),
     "invalid_json"),
    # An ended input longer than the limit is refused after limit + 1 bytes.
    (_environ_with_body(b'{"a":"' + b"x" * 200 + b'"}', **{"wsgi.input_terminated": True}),
     "payload_too_large"),
    # A declared length past the limit is refused before anything is read.
    (_environ_with_body(b"{}", CONTENT_LENGTH="101"), "payload_too_large"),
])
def test_body_refusals_without_reading_past_the_frame(app, environ, code):
    with pytest.raises(ApiError) as refused:
        read_json(Request(environ), 100)
    assert refused.value.code == code


@pytest.mark.parametrize("path, target", [("/static//app.css", "/static/app.css"),
                                          ("/c//lobby?x=1", "/c/lobby?x=1")])
def test_a_redirect_to_this_server_never_repeats_the_host_header(open_client, path, target):
    """Werkzeug merges double slashes with an absolute redirect built from Host; anyone can
    send any Host (to a server others reach), so the Location is the path alone."""
    r = open_client.get(path, headers={"Host": "evil.example"})
    assert r.status_code == 308 and r.headers["Location"] == target
    # nor in a body: werkzeug's English page linked to http://evil.example/...
    assert r.data == b"" and b"evil.example" not in r.data
