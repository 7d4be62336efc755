"""Deleting one's own account from /settings: what identified the person goes in one write,
what others wrote stays under a name that says nothing."""
from __future__ import annotations

import json
import re
from html import unescape

import pytest
from conftest import Person, contributor, count, joined_person
from helpers import assert_web_error
from qa_helpers import answer, claim_ok

from lobbytalks.services import accounts
from lobbytalks.services.account_deletion import DELETED_TASK
from test_mail import mail_app, smtp  # noqa: F401 (the fixture)

PRIVATE = "私密：生产库 40 GB，凌晨三点有批量写入。"
NEW_PRIVATE = "私密（第二版）：库现在 60 GB。"


@pytest.fixture
def leaving(app):
    """Someone with a bit of everything: an address, two communities, an open question
    (two versions of private context) and a closed one, an agent whose answer to another's
    question left a pending memory, a live lease, a notification and a report."""
    rt = app.config["LOBBYTALKS"]
    person = joined_person(app)
    person.mail_to("leaving@example.org")
    assert person.communities_post("create", name="备份互助",
                                   description="聊备份").status_code == 200
    own = person.ask(title="怎样备份 40 GB 的 SQLite？", privateContext=PRIVATE)
    assert person.web_post("revise", topic=own, privateContext=NEW_PRIVATE).status_code == 200
    closed = person.ask(title="WAL 文件为什么这么大？")
    assert person.web_post("close", topic=closed).status_code == 200
    other_asker = joined_person(app)
    elsewhere = other_asker.ask(title="VACUUM 要锁多久？")
    agent = person.new_agent("离开的虾")
    kept_answer = answer(agent, elsewhere)
    leased = claim_ok(agent, other_asker.ask(title="备份要校验吗？"))["task"]["id"]
    helper, helper_agent = contributor(app, "帮忙虾")
    answer(helper_agent, own)  # a notification for the person
    assert person.web_post("report", topic=other_asker.ask(title="广告？"),
                           reason="像是广告").status_code == 200
    person.user_id = person.web_get(action="me").get_json()["user"]["id"]
    return {"person": person, "own": own, "closed": closed, "elsewhere": elsewhere,
            "other_asker": other_asker, "agent": agent, "answer": kept_answer,
            "leased": leased, "db": rt.db}


def delete(person: Person, password: str | None = None):
    return person.web_post("delete_account", currentPassword=password or person.password)


def test_deleting_erases_what_identified_the_person_in_one_write(app, leaving):
    person, db, uid = leaving["person"], leaving["db"], leaving["person"].user_id
    other_browser = Person(app, username=person.username)
    assert other_browser.web_post("login", username=person.username,
                                  password=person.password).status_code == 200
    lobby_members = db.value("SELECT member_count FROM communities WHERE id = 'lobby'")
    assert count(db, "memories", "user_id = :u", {"u": uid}) == 1
    assert count(db, "notifications", "user_id = :u", {"u": uid}) >= 1

    r = delete(person)
    assert r.status_code == 200 and r.get_json() == {"ok": True, "deleted": True}
    cookie = r.headers["Set-Cookie"]
    assert cookie.startswith("xia_session=;") and "Max-Age=0" in cookie
    row = db.one("SELECT username, password_hash, email, email_confirmed, email_notify,"
                 " deleted_at FROM users WHERE id = :id", {"id": uid})
    assert re.fullmatch(r"deleted_[0-9a-f]{16}", row["username"])
    assert (row["password_hash"], row["email"], row["email_confirmed"], row["email_notify"]) == \
        ("!", "", "", 0)
    assert row["deleted_at"] is not None
    for table, where in (("sessions", "user_id = :u"), ("memories", "user_id = :u"),
                         ("notifications", "user_id = :u"), ("reports", "reporter_id = :u"),
                         ("memberships", "user_id = :u"), ("agent_requests", "user_id = :u"),
                         ("tokens", "user_id = :u AND revoked = 0"),
                         ("profiles", "user_id = :u AND archived_at IS NULL"),
                         ("topics", "author_id = :u AND status = 'open'"),
                         ("question_versions", "private_context IS NOT NULL AND topic_id IN"
                                               " (SELECT id FROM topics WHERE author_id = :u)")):
        assert count(db, table, where, {"u": uid}) == 0, table
    assert db.value("SELECT member_count FROM communities WHERE id = 'lobby'") == lobby_members - 1
    assert db.value("SELECT state || ' ' || error FROM tasks WHERE id = :id",
                    {"id": leaving["leased"]}) == f"failed {DELETED_TASK}"
    # every login of it has ended, its tokens say so, and the old password opens nothing
    assert person.web_get(action="me").get_json()["user"] is None
    assert other_browser.web_get(action="me").get_json()["user"] is None
    assert_web_error(leaving["agent"].http.get("/api/external?action=list_topics",
                                               headers=leaving["agent"].headers), 401)
    assert_web_error(Person(app).web_post("login", username=person.username,
                                          password=person.password), 401)
    assert_web_error(Person(app).web_post("login", username=row["username"],
                                          password=person.password), 401)


def test_what_others_wrote_stays_under_a_name_that_says_nothing(app, leaving):
    person, db = leaving["person"], leaving["db"]
    assert delete(person).status_code == 200
    name = db.value("SELECT username FROM users WHERE id = :id", {"id": person.user_id})
    reader = leaving["other_asker"]
    page = reader.http.get(f"/q/{leaving['elsewhere']}").get_data(as_text=True)
    assert leaving["answer"] in page and "离开的虾" in page and name in page
    assert person.username not in page
    own = Person(app).http.get(f"/q/{leaving['own']}?lang=en").get_data(as_text=True)
    assert "怎样备份 40 GB 的 SQLite？" in own and name in own and PRIVATE not in own
    for who in (person.username, name):
        assert Person(app).http.get(f"/u/{who}").status_code == 404
    # the old name is free again, and what the deleted account wrote does not move to it
    newcomer = Person(app, username=person.username).register()
    assert newcomer.http.get(f"/u/{person.username}").status_code == 200
    assert person.username not in reader.http.get(
        f"/q/{leaving['elsewhere']}").get_data(as_text=True)


def test_a_wrong_password_deletes_nothing_and_counts_as_a_failed_login(app, leaving):
    person, db = leaving["person"], leaving["db"]
    r = delete(person, "not my password")
    assert_web_error(r, 403, "forbidden")
    assert r.get_json()["error"].startswith("currentPassword: ")
    assert db.value("SELECT username FROM users WHERE id = :id",
                    {"id": person.user_id}) == person.username
    assert person.web_get(action="me").get_json()["user"]["username"] == person.username
    assert db.value("SELECT deleted_at FROM users WHERE id = :id", {"id": person.user_id}) is None


def test_an_admin_cannot_delete_their_account(app):
    admin = Person(app).register()
    assert accounts.set_admin(app.config["LOBBYTALKS"].db, admin.username, True)
    assert_web_error(delete(admin), 403, "forbidden")
    assert admin.web_get(action="me").get_json()["user"]["username"] == admin.username
    page = admin.http.get("/settings?lang=en").get_data(as_text=True)
    assert 'data-action="delete_account"' not in page and "revoke your admin role" in page


@pytest.mark.parametrize("name", ["deleted_0123456789abcdef", "Deleted_me", "DELETED_"])
def test_no_one_may_register_a_name_deleted_accounts_get(app, name):
    r = Person(app).web_post("register", username=name, password="correct horse 1")
    assert_web_error(r, 400, "invalid_request")
    assert r.get_json()["error"].startswith("username: ")  # said at the field: not "taken"


def test_a_deleted_account_is_mailed_nothing_more(settings, smtp):
    app = mail_app(settings, smtp.port)
    rt = app.config["LOBBYTALKS"]
    rt.mailer.stop()  # what waits is sent by hand below
    person = joined_person(app)
    person.mail_to("leaving@example.org")
    answer(contributor(app)[1], person.ask(title="怎样备份 40 GB 的 SQLite？"))
    assert Person(app).web_post("forgot_password", account=person.username).status_code == 200
    assert count(rt.db, "mail_outbox") == 1
    assert delete(person).status_code == 200
    assert count(rt.db, "mail_outbox") == 0
    assert rt.mailer.drain() == 0 and smtp.envelopes == []


def test_the_settings_page_explains_and_asks_for_the_password(app):
    person = joined_person(app)
    page = person.http.get("/settings?lang=en").get_data(as_text=True)
    form = re.search(r'<form[^>]*data-action="delete_account"[^>]*>', page).group(0)
    assert 'method="post"' in form and "data-confirm=" in form and 'data-then="go:/"' in form
    assert 'id="f-delete-currentPassword"' in page and "cannot be undone" in page
    assert "Download your data above first" in page


def test_pages_name_a_deleted_account_without_a_link_to_a_profile(app, leaving):
    person, db = leaving["person"], leaving["db"]
    assert delete(person).status_code == 200
    name = db.value("SELECT username FROM users WHERE id = :id", {"id": person.user_id})
    answers = leaving["other_asker"].http.get(f"/q/{leaving['elsewhere']}?lang=en").get_data(
        as_text=True)
    asked = Person(app).http.get(f"/q/{leaving['own']}?lang=en").get_data(as_text=True)
    for page in (answers, asked):
        assert name in page and f'href="/u/{name}"' not in page
    # said in words, the placeholder kept where an admin finds it (a title)
    assert f'<span class="owner" title="{name}">a deleted account&#39;s agent</span>' in answers
    assert f'<span class="person" title="{name}">a deleted account</span>' in asked
    assert f">{name}<" not in answers + asked
    # and so does the inbox of the person their agent answered
    inbox = leaving["other_asker"].http.get("/inbox?lang=en").get_data(as_text=True)
    assert "A deleted account&#39;s agent" in inbox and name not in inbox
    [item] = [n for n in leaving["other_asker"].web_get(action="notifications").get_json()[
        "notifications"] if n["kind"] == "answer"]
    assert item["actorOwner"] == name  # the JSON names the account as it is now


def test_the_operator_deletes_an_account_from_the_command_line(app, leaving, capsys):
    """For someone who can no longer log in (suspended, say): the same erasure, audited
    under the new name only."""
    from conftest import run_cli
    person, db = leaving["person"], leaving["db"]
    data_dir = app.config["LOBBYTALKS"].settings.data_dir
    capsys.readouterr()
    assert run_cli(["admin", "delete-user", person.username.upper()], data_dir) == 0
    name = db.value("SELECT username FROM users WHERE id = :id", {"id": person.user_id})
    assert capsys.readouterr().out.strip() == \
        f"{person.username.upper()}: account deleted, now named {name}"
    assert person.web_get(action="me").get_json()["user"] is None
    assert count(db, "topics", "author_id = :u AND status = 'open'", {"u": person.user_id}) == 0
    assert [tuple(r) for r in db.all("SELECT action, target_id, actor_id FROM audit_log")] == \
        [("delete_user", name, None)]
    # gone already, or never there: nothing to delete
    assert run_cli(["admin", "delete-user", person.username], data_dir) == 1
    assert "no user named" in capsys.readouterr().err
    # nor an admin to make of what is left of it (it would be told of every report)
    assert run_cli(["admin", "grant", name], data_dir) == 1
    assert capsys.readouterr().err.strip() == f"lobbytalks: no user named {name!r}"
    assert db.value("SELECT is_admin FROM users WHERE id = :id", {"id": person.user_id}) == 0
    admin = Person(app).register()
    accounts.set_admin(db, admin.username, True)
    assert run_cli(["admin", "delete-user", admin.username], data_dir) == 1
    assert "is an admin: revoke the role first" in capsys.readouterr().err
    assert admin.web_get(action="me").get_json()["user"]["username"] == admin.username


def _deleted_right_after(module, name: str, app, user_id: int, monkeypatch) -> None:
    """``module.name`` runs, then the account is deleted, as another tab's deletion landing
    between a request's password check and its write."""
    from lobbytalks import clock
    from lobbytalks.services import account_deletion
    checked = getattr(module, name)

    def then_deleted(*args, **kwargs):
        result = checked(*args, **kwargs)
        account_deletion.delete(app.config["LOBBYTALKS"].db, user_id, now=clock.now())
        return result
    monkeypatch.setattr(module, name, then_deleted)


@pytest.mark.parametrize("way", ["change_password", "login"])
def test_a_request_that_checked_the_password_before_the_deletion_brings_nothing_back(
        app, way, monkeypatch):
    from lobbytalks.blueprints import community_account
    person = joined_person(app)
    user_id = person.web_get(action="me").get_json()["user"]["id"]
    other = Person(app, username=person.username)
    if way == "change_password":
        assert other.web_post("login", username=person.username,
                              password=person.password).status_code == 200
        _deleted_right_after(community_account, "require_current_password", app, user_id,
                             monkeypatch)
        r = other.web_post("change_password", currentPassword=person.password,
                           newPassword="zebra lantern 42 q")
    else:
        _deleted_right_after(community_account, "_checked_password", app, user_id, monkeypatch)
        r = other.web_post("login", username=person.username, password=person.password)
    assert_web_error(r, 401, "unauthorized")
    db = app.config["LOBBYTALKS"].db
    row = db.one("SELECT password_hash, deleted_at FROM users WHERE id = :id", {"id": user_id})
    assert row["password_hash"] == "!" and row["deleted_at"] is not None
    assert count(db, "sessions", "user_id = :u", {"u": user_id}) == 0
    assert other.web_get(action="me").get_json()["user"] is None


def test_the_operator_cannot_give_a_deleted_account_a_password(app, capsys):
    from conftest import run_cli
    person = joined_person(app)
    assert delete(person).status_code == 200
    db = app.config["LOBBYTALKS"].db
    name = db.value("SELECT username FROM users WHERE deleted_at IS NOT NULL")
    assert run_cli(["admin", "reset-password", name],
                   app.config["LOBBYTALKS"].settings.data_dir) == 1
    assert db.value("SELECT password_hash FROM users WHERE username = :n", {"n": name}) == "!"


def test_the_audit_log_names_a_deleted_person_by_the_new_name(app):
    from lobbytalks import clock
    from lobbytalks.services import moderation
    db = app.config["LOBBYTALKS"].db
    admin = Person(app).register()
    accounts.set_admin(db, admin.username, True)
    admin_id = admin.web_get(action="me").get_json()["user"]["id"]
    person = joined_person(app)
    moderation.suspend(db, admin_id, person.username.upper(), "刷屏", now=clock.now())
    moderation.unsuspend(db, admin_id, person.username, "误会", now=clock.now())
    assert person.web_post("login", username=person.username,  # the suspension ended it
                           password=person.password).status_code == 200
    assert delete(person).status_code == 200
    name = db.value("SELECT username FROM users WHERE deleted_at IS NOT NULL")
    assert [r[0] for r in db.all("SELECT target_id FROM audit_log ORDER BY id")] == [name, name]


def test_a_deleted_account_is_asked_for_nothing_and_told_nothing(app, db):
    """An answer of a deleted account could still be asked for a card (the request waited
    for ever, never to be read), a published card and a reopened question wrote notices to
    the account again, and an admin could reopen its question, which nobody could close."""
    from test_moderation import make_admin
    asker = joined_person(app)
    topic = asker.ask()
    author, agent = contributor(app)
    shared = answer(agent, topic)
    kept = answer(agent, topic, conclusion="第二条回答：在线备份 API 可以在服务运行时得到一致副本 [S1]。")
    assert author.web_post("share", message=shared, sharePublic=True).status_code == 200
    author_id = author.web_get(action="me").get_json()["user"]["id"]
    assert delete(author).status_code == 200
    page = asker.http.get(f"/q/{topic}").get_data(as_text=True)
    bodies = [json.loads(unescape(b)) for b in re.findall(r"data-body='([^']*)'", page)]
    assert {"action": "share_request", "message": kept} not in bodies  # not offered
    assert_web_error(asker.web_post("share_request", message=kept), 409, "invalid_request")
    assert asker.web_post("card_preview", topic=topic).status_code == 200
    assert asker.web_post("card_publish", topic=topic).status_code == 200
    assert count(db, "notifications", "user_id = :u", {"u": author_id}) == 0
    # the deleted asker's question, closed by the deletion, stays closed
    assert delete(asker).status_code == 200
    admin = make_admin(app)
    assert_web_error(admin.web_post("reopen", topic=topic, reason="还想要回答"), 409,
                     "invalid_request")
    assert db.value("SELECT status FROM topics WHERE id = :id", {"id": topic}) == "closed"
