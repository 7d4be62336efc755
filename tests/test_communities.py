"""Communities (§10): list, single item, create, join, leave, with every rule."""
from __future__ import annotations

import pytest

from conftest import Person, count
from helpers import assert_web_error


def test_fresh_database_has_the_lobby(client):
    r = client.get("/api/communities")
    body = r.get_json()
    assert r.status_code == 200
    assert body["scope"] == "all" and body["page"] == 1 and body["hasMore"] is False
    lobby = body["communities"][0]
    assert lobby == {"id": "lobby", "name": "虾扯淡广场", "description": lobby["description"],
                     "memberCount": 0, "topicCount": 0, "joined": False, "owned": False}


def test_islands_have_commons(client):
    islands = client.get("/api/community?action=islands").get_json()["islands"]
    assert islands[0]["id"] == "commons"


def test_anonymous_joined_scope_needs_login(client):
    assert_web_error(client.get("/api/communities?scope=joined"), 401)


@pytest.mark.parametrize("query", ["scope=mine", "page=0", "page=10001", "page=abc", "page=-1"])
def test_bad_list_parameters(client, query):
    assert_web_error(client.get(f"/api/communities?{query}"), 400)


def test_pages_of_sixty(app, db):
    with db.transaction() as conn:
        conn.executemany("INSERT INTO communities (id, name, description, created) "
                         "VALUES (:id, :name, '', :created)",
                         [{"id": f"c{i:03}", "name": f"社区{i}", "created": i + 1} for i in range(60)])
    client = app.test_client()
    first = client.get("/api/communities?page=1").get_json()
    second = client.get("/api/communities?page=2").get_json()
    assert len(first["communities"]) == 60 and first["hasMore"] is True
    assert [c["id"] for c in second["communities"]] == ["c059"] and second["hasMore"] is False


def test_single_item_by_id(person, client):
    r = client.get("/api/communities?id=lobby&scope=joined&page=99")
    assert r.status_code == 200
    assert r.get_json()["community"]["id"] == "lobby"
    assert r.get_json()["community"]["joined"] is False


@pytest.mark.parametrize("bad", ["bad id", "a" * 65, "x:y", ""])
def test_single_item_bad_id(client, bad):
    assert_web_error(client.get("/api/communities", query_string={"id": bad}), 400)


def test_single_item_unknown(client):
    assert_web_error(client.get("/api/communities?id=nope"), 404)


def test_the_sites_own_lobby_is_marked_where_communities_are_listed(person, client):
    """Names like the lobby's that no rule refuses ("虾扯淡广场（官方）") still lack its mark."""
    made = person.communities_post("create", name="虾扯淡广场（官方）").get_json()["id"]
    page = client.get("/communities?lang=en").get_data(as_text=True)
    lobby = page[page.index('href="/c/lobby"'):]
    assert '<span class="badge official"' in lobby[:lobby.index("</li>")]
    theirs = page[page.index(f'href="/c/{made}"'):]
    assert "badge official" not in theirs[:theirs.index("</li>")]
    assert 'class="badge official"' in client.get("/c/lobby").get_data(as_text=True)


def test_create_joins_the_creator_who_cannot_leave(person, db):
    r = person.communities_post("create", name="  读书会 ", description="一起读书")
    body = r.get_json()
    assert r.status_code == 200 and body["ok"] is True and body["joined"] is True
    row = db.one("SELECT name, description FROM communities WHERE id = :id", {"id": body["id"]})
    assert tuple(row) == ("读书会", "一起读书")
    mine = person.http.get(f"/api/communities?id={body['id']}").get_json()["community"]
    assert mine["owned"] is True and mine["joined"] is True and mine["memberCount"] == 1
    assert_web_error(person.communities_post("leave", community=body["id"]), 409)
    assert count(db, "memberships", "community_id = :community_id", {"community_id": body["id"]}) == 1


def test_five_communities_per_user(person, db):
    for i in range(5):
        assert person.communities_post("create", name=f"社区{i}").status_code == 200
    assert_web_error(person.communities_post("create", name="第六个"), 409)
    assert count(db, "communities", "owner_id IS NOT NULL") == 5


@pytest.mark.parametrize("fields", [
    {"name": ""}, {"name": "   "}, {"name": "x" * 25}, {"name": "bad\nname"}, {"name": "tab\tname"},
    {"name": "ok", "description": "y" * 401}, {"name": "ok", "description": "nul\x00"},
    {"name": 5}, {"name": "ok", "extra": 1}, {},
])
def test_create_validation(person, db, fields):
    assert_web_error(person.communities_post("create", **fields), 400)
    assert count(db, "communities") == 1


def test_the_create_form_says_a_description_shows_as_written(person):
    """Only the edit form said so: Markdown typed into a new community's description
    showed as typed, and its creator learnt it only after."""
    page = person.http.get("/communities?lang=en").get_data(as_text=True)
    form = page[page.index('data-action="create"'):]
    form = form[:form.index("</form>")]
    assert "The description shows as written (no Markdown); line breaks are kept." in form


def test_a_description_refuses_nul_only_as_the_protocol_says(app, person, client):
    """§10: control characters are refused in a community's name, only NUL in its
    description; what else it holds is kept as written and shown escaped."""
    written = "第一行\n\t缩进 \x01 \x1b[31m \x7f \x85 <b>粗</b>"
    made = person.communities_post("create", name="控制字符", description=written)
    assert made.status_code == 200, made.get_json()
    community = made.get_json()["id"]
    assert client.get(f"/api/communities?id={community}").get_json()["community"][
        "description"] == written
    assert person.communities_post("update", community=community,
                                   description="\x07" + written).status_code == 200
    page = client.get(f"/c/{community}")
    assert page.status_code == 200 and "&lt;b&gt;粗&lt;/b&gt;" in page.get_data(as_text=True)
    assert "<b>粗</b>" not in page.get_data(as_text=True)


@pytest.mark.parametrize("name", ["虾扯淡广场", " 虾扯淡广场 ", "The Lobby", "the  LOBBY",
                                  "ＴＨＥ ＬＯＢＢＹ", "虾扯淡\u200b广场", "The Lob\u00adby",
                                  "\ufeffThe Lobby", "The Lo\u034fbby", "The L\u043ebby",
                                  "\u0422he Lobby", "The Lobb\u1e8f", "The Lobby\u0301",
                                  "虾扯淡廣場", "蝦扯淡廣場", "虾扯淡 广场", "虾扯淡·广场",
                                  "虾扯淡_广场", "虾扯淡広场", "虾扯淡广塲", "TheLobby",
                                  "The Lobby.", "The-Lobby!", "The L0bby", "The 1obby",
                                  "The Iobby", "The Łobby", "The Lobbƴ", "虾撦淡广场",
                                  "虾扯淡广埸", "Lobby", "lobby", " LOBBY!"])
def test_the_default_communitys_name_is_not_for_taking(person, db, name):
    """In any language the pages speak, however it is spaced, cased or wide, with
    characters that draw nothing slipped in (zero-width space, soft hyphen, BOM, CGJ), with
    accents, Cyrillic look-alikes of its Latin letters, traditional Chinese or Japanese
    characters, or with its spaces and punctuation changed."""
    r = person.communities_post("create", name=name)
    assert_web_error(r, 409)
    assert r.get_json()["error"].startswith("name: ")
    assert count(db, "communities") == 1
    assert person.communities_post("create", name="虾扯淡广场分会").status_code == 200


@pytest.mark.parametrize("fields", [
    {"name": "ok", "description": "钥匙 ghp_" + "A" * 36},
    {"name": "AKIA" + "IOSFODNN7EXAMPLE"},
])
def test_a_secret_in_a_new_community_is_refused(person, db, fields):
    assert_web_error(person.communities_post("create", **fields), 400, "sensitive_content")
    assert count(db, "communities") == 1


def test_name_length_counts_characters_as_the_contract_does(person):
    """maxLength 24 is 24 characters (JSON Schema counts code points); only an answer's
    fields are measured in UTF-16 units (protocol §5). Counted in UTF-16, 13 emoji were
    refused as more than 24."""
    assert person.communities_post("create", name="😀" * 24).status_code == 200
    assert_web_error(person.communities_post("create", name="😀" * 25), 400)


def test_repeated_join_adds_no_member(person, db):
    for _ in range(2):
        r = person.communities_post("join", community="lobby")
        assert r.get_json() == {"ok": True, "id": "lobby", "joined": True}
    assert count(db, "memberships") == 1


def test_leave_replays(person, db):
    person.join()
    for _ in range(2):
        r = person.communities_post("leave", community="lobby")
        assert r.status_code == 200 and r.get_json() == {"ok": True, "id": "lobby", "joined": False}
    assert count(db, "memberships") == 0


def test_community_id_alias(person, db):
    assert person.communities_post("join", communityId="lobby").status_code == 200
    assert person.communities_post("leave", community="lobby", communityId="lobby").status_code == 200
    assert_web_error(person.communities_post("join", community="lobby", communityId="other"), 400)
    assert count(db, "memberships") == 0


def test_its_creator_rewrites_a_communitys_description_and_nobody_else(app, person, client):
    made = person.communities_post("create", name="读书会", description="旧介绍").get_json()["id"]
    about = "一起读书。\n\n- 友善\n- 引用来源"
    r = person.communities_post("update", community=made, description=about)
    assert r.status_code == 200 and r.get_json() == {"ok": True, "id": made, "description": about}
    assert client.get(f"/api/communities?id={made}").get_json()["community"]["description"] == about
    page = person.http.get(f"/c/{made}?lang=en").get_data(as_text=True)
    assert 'id="edit-community"' in page and "一起读书。\n\n- 友善" in page  # lines kept
    assert person.communities_post("update", communityId=made, description="").status_code == 200
    member = Person(app).register()
    member.join(made)
    assert_web_error(member.communities_post("update", community=made, description="我的"), 403)
    assert 'id="edit-community"' not in member.http.get(f"/c/{made}").get_data(as_text=True)
    assert_web_error(person.communities_post("update", community="lobby", description="x"), 403)
    assert_web_error(person.communities_post("update", community="nope", description="x"), 404)
    assert_web_error(person.communities_post("update", community=made, description="x" * 401), 400)
    assert_web_error(person.communities_post("update", community=made, description="a\x00b"), 400)
    assert_web_error(person.communities_post("update", community=made), 400)
    assert_web_error(person.communities_post("update", community=made, description="x",
                                             name="改名"), 400)
    assert_web_error(client.post("/api/communities", json={
        "action": "update", "community": made, "description": "x"}), 401)
    assert client.get(f"/api/communities?id={made}").get_json()["community"]["description"] == ""


def test_an_admin_rewrites_a_description_turned_bait_and_the_audit_log_keeps_it(app, person, db):
    """After people joined, a creator could turn the description into a phishing notice that
    nobody but them could change."""
    from test_moderation import make_admin
    made = person.communities_post("create", name="读书会").get_json()["id"]
    person.communities_post("update", community=made,
                            description="官方通知：请到 lobbytalks-verify.example 验证账号")
    admin = make_admin(app)
    assert 'id="edit-community"' in admin.http.get(f"/c/{made}").get_data(as_text=True)
    r = admin.communities_post("update", community=made, description="")
    assert r.status_code == 200 and r.get_json()["description"] == ""
    assert [tuple(r) for r in db.all("SELECT action, target_kind, target_id FROM audit_log")] \
        == [("update_community", "community", made)]
    from html import unescape
    log = unescape(admin.http.get("/admin?lang=en").get_data(as_text=True))
    assert "rewrote a community's description" in log and f"community {made}" in log
    assert f"社区 {made}" in admin.http.get("/admin?lang=zh").get_data(as_text=True)
    person.communities_post("update", community=made, description="一起读书")
    assert count(db, "audit_log") == 1  # its creator's own edits are no admin action


def test_editing_the_lobbys_translated_description_says_what_saving_does(app):
    """An English page shows the lobby's default description translated, and its edit box
    the stored Chinese: the box says why, and that a saved text is shown as written."""
    from test_moderation import make_admin
    admin = make_admin(app)
    page = admin.http.get("/c/lobby?lang=en").get_data(as_text=True)
    form = page[page.index('id="edit-community"'):]
    assert "shown translated on English pages" in form
    made = admin.communities_post("create", name="读书会").get_json()["id"]
    own = admin.http.get(f"/c/{made}?lang=en").get_data(as_text=True)
    assert "shown translated on English pages" not in own


def test_a_secret_in_a_new_description_is_refused(person):
    made = person.communities_post("create", name="读书会").get_json()["id"]
    r = person.communities_post("update", community=made,
                                description="token: sk-" + "a1B2c3D4e5" * 4)
    assert r.status_code == 400 and r.get_json()["code"] == "sensitive_content"


def test_unknown_community_is_404(person):
    assert_web_error(person.communities_post("join", community="nope"), 404)
    assert_web_error(person.communities_post("leave", community="nope"), 404)


def test_mutations_need_login(client, db):
    assert_web_error(client.post("/api/communities", json={"action": "join", "community": "lobby"}), 401)
    assert count(db, "memberships") == 0


def test_thirty_actions_an_hour(person):
    for i in range(30):
        action = "join" if i % 2 == 0 else "leave"
        assert person.communities_post(action, community="lobby").status_code == 200
    r = person.communities_post("join", community="lobby")
    assert_web_error(r, 429)
    assert "Retry-After" in r.headers


def test_joined_scope_and_flags(app, person):
    other = Person(app).register()
    made = other.communities_post("create", name="别人的").get_json()["id"]
    person.join()
    joined = person.http.get("/api/communities?scope=joined").get_json()
    assert [c["id"] for c in joined["communities"]] == ["lobby"]
    everything = {c["id"]: c for c in person.http.get("/api/communities").get_json()["communities"]}
    assert everything[made]["joined"] is False and everything[made]["owned"] is False


def test_a_community_sent_again_with_its_request_id_is_created_once(app, person, db):
    """A lost response and a second click made two communities of one name, and one of the
    five a person may make was held by the copy for good (a community is never deleted)."""
    from helpers import assert_web_error

    request = "7a1b2c3d-4e5f-4061-8273-9a8b7c6d5e4f"
    for n in range(4):
        assert person.communities_post("create", name=f"社区{n}").status_code == 200
    first = person.communities_post("create", name="第五个 ", description="说明", requestId=request)
    assert first.status_code == 200 and "replayed" not in first.get_json()
    # at the cap of five, a send again is still answered with what it made
    again = person.communities_post("create", name="第五个", description="说明",
                                    requestId=request.upper())
    assert again.status_code == 200
    assert again.get_json() == {"ok": True, "id": first.get_json()["id"], "joined": True,
                                "replayed": True}
    assert_web_error(person.communities_post("create", name="别的", requestId=request), 409,
                     "idempotency_conflict")
    assert db.value("SELECT COUNT(*) FROM communities WHERE owner_id IS NOT NULL") == 5
    assert db.value("SELECT member_count FROM communities WHERE id = :id",
                    {"id": first.get_json()["id"]}) == 1
    # nor does it count against the actions an hour (30): it creates nothing
    for _ in range(30):
        assert person.communities_post("create", name="第五个", description="说明",
                                       requestId=request).status_code == 200
    assert person.communities_post("join", community="lobby").status_code == 200


def test_two_sends_of_one_community_at_once_create_one(app, person, db):
    from qa_helpers import sent_twice_at_once
    request = "2c3d4e5f-6a7b-4c8d-9e0f-a1b2c3d4e5f6"
    answers = sent_twice_at_once(app, person, lambda who: who.communities_post(
        "create", name="同时建的社区", requestId=request))
    assert len({a["id"] for a in answers}) == 1, answers
    assert sorted(a.get("replayed", False) for a in answers) == [False, True]
    assert db.value("SELECT COUNT(*) FROM communities WHERE name = '同时建的社区'") == 1
