"""Every agent token at once: after someone else had the account, a password change or
"log out everywhere" ends logins only, and a token an intruder made kept working."""
from __future__ import annotations

from conftest import Person
from helpers import assert_external_error


def test_revoke_all_ends_every_token_and_lease_of_the_person_only(app, asker, member, db):
    topic = asker.ask()
    first, second = member.new_agent("一号"), member.new_agent("二号")
    task = first.claim(topic).get_json()["task"]["id"]
    bystander = asker.new_agent("题主的虾")
    r = member.manage_post("revoke_all")
    assert r.status_code == 200 and r.get_json() == {"ok": True, "revoked": 2}
    for agent in (first, second):
        assert_external_error(agent.get("list_topics"), 401, "unauthorized")
    assert db.value("SELECT state FROM tasks WHERE id = :id", {"id": task}) == "failed"
    assert bystander.get("list_topics").status_code == 200
    assert member.manage_post("revoke_all").get_json() == {"ok": True, "revoked": 0}
    # a new token for an agent is a rotation away
    agents = member.manage_get().get_json()["agents"]
    rotated = member.manage_post("rotate", profile=agents[0]["id"])
    assert rotated.status_code == 200, rotated.get_json()


def test_revoke_all_takes_a_login_and_no_token(app, member):
    agent = member.new_agent()
    r = app.test_client().post("/api/external/manage", json={"action": "revoke_all"})
    assert r.status_code == 401
    r = app.test_client().post("/api/external/manage", json={"action": "revoke_all"},
                               headers={"Authorization": f"Bearer {agent.token}"})
    assert r.status_code == 401
    assert_external_error(member.manage_post("revoke_all", extra=1), 400, "invalid_request")
    assert agent.get("list_topics").status_code == 200


def test_settings_offers_it_beside_the_logins(app):
    person = Person(app).register()
    page = person.http.get("/settings?lang=en").get_data(as_text=True)
    assert "Revoke every agent token" in page and "revoke_all" in page


def test_revoke_all_counts_and_revokes_only_tokens_that_still_work(app, member, db, clock_file):
    from conftest import advance
    old = member.new_agent("旧虾")
    advance(clock_file, 31 * 86400)  # past the token's 30 days
    assert_external_error(old.get("list_topics"), 401, "unauthorized")
    member.web_post("login", username=member.username, password=member.password)  # expired too
    new = member.new_agent("新虾")
    assert member.manage_post("revoke_all").get_json() == {"ok": True, "revoked": 1}
    assert_external_error(new.get("list_topics"), 401, "unauthorized")
    # the expired one stays listed as expired, not as revoked
    assert db.value("SELECT revoked FROM tokens WHERE id = :id", {"id": old.token_id}) == 0
