"""A request that checked the account before another one changed it: the change wins.

Each test lets the other change commit at the moment between the request's check and its
write (a hook on what the request calls in between), as two browsers can."""
from __future__ import annotations

import pytest

from conftest import Person, count, joined_person
from helpers import assert_web_error
from lobbytalks import clock
from lobbytalks.errors import ApiError
from lobbytalks.blueprints import community_account
from lobbytalks.services import account_deletion, accounts, mail_address

OLD = "old secret horse 1"
OWNERS = "owner chosen 7Tq!x"


def owner_and_intruder(app) -> tuple[Person, Person, int]:
    """An account, and someone else logged in to it with its (old) password."""
    owner = Person(app, password=OLD).register()
    user_id = owner.web_get(action="me").get_json()["user"]["id"]
    intruder = Person(app, username=owner.username, password=OLD)
    assert intruder.web_post("login", username=owner.username, password=OLD).status_code == 200
    return owner, intruder, user_id


def owner_changes_password_after_the_check(app, monkeypatch, user_id: int) -> None:
    """The owner's own change commits right after the intruder's password was checked
    (every session of the account ends with it)."""
    rt = app.config["LOBBYTALKS"]
    checked = community_account.require_current_password

    def then_the_owner_changes_it(*args):
        found = checked(*args)
        accounts.set_password(rt.db, user_id, OWNERS, cost=rt.settings.password_cost)
        return found
    monkeypatch.setattr(community_account, "require_current_password", then_the_owner_changes_it)


def test_a_password_change_checked_before_the_owners_own_is_refused(app, monkeypatch):
    """The intruder's change went through over the owner's and gave them a new session:
    the owner locked out of their account, the intruder in it."""
    owner, intruder, user_id = owner_and_intruder(app)
    owner_changes_password_after_the_check(app, monkeypatch, user_id)
    r = intruder.web_post("change_password", currentPassword=OLD, newPassword="intruder picks 9Zw")
    assert_web_error(r, 403, "forbidden")
    monkeypatch.undo()
    assert intruder.web_get(action="me").get_json()["user"] is None
    assert Person(app, username=owner.username).web_post(
        "login", username=owner.username, password=OWNERS).status_code == 200


def test_a_deletion_checked_before_the_owners_password_change_is_refused(app, db, monkeypatch):
    owner, intruder, user_id = owner_and_intruder(app)
    owner_changes_password_after_the_check(app, monkeypatch, user_id)
    assert_web_error(intruder.web_post("delete_account", currentPassword=OLD), 403, "forbidden")
    assert db.value("SELECT deleted_at FROM users WHERE id = :id", {"id": user_id}) is None
    assert db.value("SELECT username FROM users WHERE id = :id", {"id": user_id}) == owner.username


def test_an_address_confirmed_with_a_password_changed_since_is_refused(app, db):
    """Reset mail goes to the confirmed address: an old session holding the old password
    must not confirm one after the owner changed it."""
    rt = app.config["LOBBYTALKS"]
    owner, intruder, user_id = owner_and_intruder(app)
    assert intruder.web_post("notify_settings", email="intruder@example.org",
                             emailNotify=False).status_code == 200
    stale = db.value("SELECT password_hash FROM users WHERE id = :id", {"id": user_id})
    accounts.set_password(rt.db, user_id, OWNERS, cost=rt.settings.password_cost)
    now = clock.now()
    right = mail_address.code(rt.keyring, user_id, "intruder@example.org", now=now)
    with pytest.raises(ApiError) as refused:
        mail_address.confirm(rt.db, rt.keyring, user_id, right, now=now, checked=stale)
    assert refused.value.status == 403
    assert db.value("SELECT email_confirmed FROM users WHERE id = :id", {"id": user_id}) == ""
    checked = db.value("SELECT password_hash FROM users WHERE id = :id", {"id": user_id})
    assert mail_address.confirm(rt.db, rt.keyring, user_id, right, now=now, checked=checked)
    assert db.value("SELECT email_confirmed FROM users WHERE id = :id",
                    {"id": user_id}) == "intruder@example.org"


def test_an_agent_made_while_its_account_is_deleted_is_refused(app, db):
    """The manage request read its session just before the deletion committed, and made a
    live agent and token on the deleted account (which then rejoined a community)."""
    person = joined_person(app)
    rt = app.config["LOBBYTALKS"]
    user_id = person.web_get(action="me").get_json()["user"]["id"]
    hit = rt.gate.hit

    def hit_then_delete(limit, scope, key, cost=1):
        hit(limit, scope, key, cost)
        if scope == "manage":  # the owner's delete_account commits in another tab now
            account_deletion.delete(rt.db, user_id, now=clock.now())
    rt.gate.hit = hit_then_delete
    try:
        r = person.manage_post("register", name="晚到虾", perspective="先结论。", client="codex")
    finally:
        rt.gate.hit = hit
    assert_web_error(r, 401, "unauthorized")
    assert count(db, "tokens", "user_id = :u AND revoked = 0", {"u": user_id}) == 0
    assert count(db, "profiles", "user_id = :u AND archived_at IS NULL", {"u": user_id}) == 0
