"""Private question context: who sees it, the scope a task freezes at claim, and the
encryption at rest seen through the running app (database bytes, tampering, rotation, keys)."""
from __future__ import annotations

import base64
import logging
import os
import secrets
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import pgtest
from conftest import Person, ask_question, contributor, count, joined_person, open_database
from helpers import assert_external_error, assert_web_error
from qa_helpers import answer, claim_ok, revise, submit_ok

from lobbytalks import cli, create_app
from lobbytalks.crypto import Keyring, SecretKeyProblem

SECRET = "私密：预算 4711 欧元，供应商 Zyxwvut GmbH"
PUBLIC = "公开背景：小团队内部工具"


@pytest.fixture(autouse=True)
def _no_key_from_environment(monkeypatch):
    # the key must come from the data folder in these tests, whatever the shell exports
    for name in ("LOBBYTALKS_SECRET_KEY", "LOBBYTALKS_SECRET_KEY_FILE", "LOBBYTALKS_DB"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def question(app):
    person, topic = ask_question(app, description=PUBLIC, privateContext=SECRET, intent="decision")
    return person, topic


def sealed_row(db, topic, version=1):
    return db.one("SELECT private_key_id, private_context FROM question_versions"
                      " WHERE topic_id = :topic_id AND version = :version", {"topic_id": topic, "version": version})


def task_row(db, task_id):
    return db.one("SELECT question_version, private_included, frozen_messages FROM tasks"
                      " WHERE id = :id", {"id": task_id})


# --- who sees it --------------------------------------------------------------------------

def test_the_asker_reads_the_private_context_on_the_web(question):
    person, topic = question
    view = person.web_get(topic=topic).get_json()
    assert view["topic"]["privateContext"] == SECRET
    assert view["versions"][0]["hasPrivateContext"] is True


@pytest.mark.parametrize("who", ["anonymous", "logged in, not joined", "joined member"])
def test_people_without_the_full_text_right_never_see_it(app, question, who):
    _, topic = question
    reader = Person(app) if who == "anonymous" else \
        Person(app).register() if who == "logged in, not joined" else joined_person(app)
    r = reader.web_get(topic=topic)
    assert r.status_code == 200
    assert "privateContext" not in r.get_json()["topic"]
    assert SECRET.encode() not in r.data
    assert PUBLIC.encode() in r.data  # control: the public part is there


def test_a_valid_contribution_unlocks_it_for_web_and_agent(app, question):
    _, topic = question
    person, agent = contributor(app)
    assert "privateContext" not in person.web_get(topic=topic).get_json()["topic"]
    assert "privateContext" not in agent.get("get_context", topic=topic).get_json()["question"]
    answer(agent, topic)
    assert person.web_get(topic=topic).get_json()["topic"]["privateContext"] == SECRET
    question_object = agent.get("get_context", topic=topic).get_json()["question"]
    assert (question_object["privateContextIncluded"], question_object["privateContext"]) == \
        (True, SECRET)


def test_list_endpoints_never_carry_it_even_for_the_asker(app, question):
    person, topic = question
    agent = person.new_agent()
    responses = [
        person.web_get(community="lobby"),
        person.web_get(community="lobby", q="公开背景"),
        agent.get("list_topics"),
        agent.get("list_topics", community="lobby"),
        person.http.get("/api/communities"),
        person.http.get("/api/communities", query_string={"id": "lobby"}),
    ]
    for r in responses:
        assert r.status_code == 200, r.get_json()
        assert SECRET.encode() not in r.data
    listed = agent.get("list_topics").get_json()["topics"]
    assert [t["id"] for t in listed] == [topic] and "privateContext" not in listed[0]


def test_responses_to_a_joined_agent_without_the_right_never_carry_it(app, question):
    _, topic = question
    _, agent = contributor(app)
    claimed = agent.claim(topic)
    task_id = claimed.get_json()["task"]["id"]
    responses = [agent.get("get_context", topic=topic), claimed,
                 agent.get("get_task_status", taskId=task_id),
                 agent.post("heartbeat", taskId=task_id), agent.get("list_topics")]
    for r in responses:
        assert r.status_code == 200, r.get_json()
        assert SECRET.encode() not in r.data


# --- the scope a task freezes at claim ------------------------------------------------------

def test_a_claim_records_whether_the_claimer_was_entitled(app, db, question):
    person, topic = question
    _, outsider = contributor(app)
    plain = claim_ok(outsider, topic)
    assert plain["task"]["privateContextIncluded"] is False
    assert plain["context"]["question"]["privateContextIncluded"] is False
    assert "privateContext" not in plain["context"]["question"]
    assert task_row(db, plain["task"]["id"])["private_included"] == 0

    own = claim_ok(person.new_agent(), topic)
    assert own["task"]["privateContextIncluded"] is True
    assert own["context"]["question"]["privateContext"] == SECRET
    assert task_row(db, own["task"]["id"])["private_included"] == 1


def test_the_task_and_its_context_give_one_scope_when_there_is_no_private_context(app):
    """The asker's own agent on a question without private context: entitled, nothing to
    include. The task said true and the context false in one claim's answer."""
    asker = joined_person(app)
    topic = asker.ask()
    own = claim_ok(asker.new_agent(), topic)
    assert own["task"]["privateContextIncluded"] is True
    assert own["context"]["question"]["privateContextIncluded"] is True
    assert "privateContext" not in own["context"]["question"]
    status = asker.new_agent("另一只").get("get_context", topic=topic).get_json()["question"]
    assert status["privateContextIncluded"] is True and "privateContext" not in status


def test_unlocking_the_full_text_later_never_widens_an_old_task(app, db, question):
    person, topic = question
    _, earlier = contributor(app)
    first_message = answer(earlier, topic)
    _, agent = contributor(app)
    request_id = str(uuid.uuid4())
    old = claim_ok(agent, topic, request_id=request_id)
    assert old["context"]["messages"] == []
    answer(agent, topic)  # a second task's valid answer gives this user the full-text right

    replay = claim_ok(agent, topic, request_id=request_id)
    assert replay["replayed"] is True
    assert replay["context"]["allowed"] is True  # the current right ...
    assert replay["context"]["messages"] == []  # ... but only the input frozen at claim
    assert replay["task"]["privateContextIncluded"] is False
    assert "privateContext" not in replay["context"]["question"]
    assert SECRET.encode() not in agent.claim(topic, request_id=request_id).data
    row = task_row(db, old["task"]["id"])
    assert (row["private_included"], row["frozen_messages"]) == (0, "[]")

    live = agent.get("get_context", topic=topic).get_json()
    assert live["question"]["privateContext"] == SECRET
    assert first_message in [m["id"] for m in live["messages"]]


def test_a_replay_also_needs_the_current_read_right(app, db, question):
    _, topic = question
    _, agent = contributor(app)
    message_id = answer(agent, topic)
    request_id = str(uuid.uuid4())
    claimed = claim_ok(agent, topic, request_id=request_id)
    assert claimed["context"]["question"]["privateContext"] == SECRET
    # the answer that gave the right is removed (as a moderator would)
    with db.transaction() as conn:  # and what points at it, the foreign keys being on
        for table in ("memories", "notifications"):
            conn.execute(f"DELETE FROM {table} WHERE message_id = :id", {"id": message_id})
        conn.execute("DELETE FROM messages WHERE id = :id", {"id": message_id})

    replay = claim_ok(agent, topic, request_id=request_id)
    assert replay["task"]["privateContextIncluded"] is True  # what the claim recorded
    assert replay["context"]["allowed"] is False
    assert replay["context"]["question"]["privateContextIncluded"] is False
    assert "privateContext" not in replay["context"]["question"]
    assert replay["context"]["messages"] == []
    assert task_row(db, claimed["task"]["id"])["private_included"] == 1


def test_a_replay_shows_the_private_context_of_the_claimed_version(app, db, question):
    person, topic = question
    agent = person.new_agent()
    request_id = str(uuid.uuid4())
    claim_ok(agent, topic, request_id=request_id)
    revise(person, topic, privateContext="新的私密条件：预算翻倍")

    replay = claim_ok(agent, topic, request_id=request_id)["context"]["question"]
    assert (replay["version"], replay["privateContext"]) == (1, SECRET)
    live = agent.get("get_context", topic=topic).get_json()["question"]
    assert (live["version"], live["privateContext"]) == (2, "新的私密条件：预算翻倍")
    assert person.web_get(topic=topic).get_json()["topic"]["privateContext"] == "新的私密条件：预算翻倍"


def test_a_revision_keeps_the_private_context_unless_it_is_replaced_or_cleared(app, db, question):
    person, topic = question
    revise(person, topic, description="新的公开条件")
    assert person.web_get(topic=topic).get_json()["topic"]["privateContext"] == SECRET
    assert sealed_row(db, topic, 2)["private_context"] != sealed_row(db, topic, 1)["private_context"]

    revise(person, topic, privateContext="")
    view = person.web_get(topic=topic).get_json()
    assert "privateContext" not in view["topic"]
    assert [v["hasPrivateContext"] for v in view["versions"]] == [True, True, False]
    assert sealed_row(db, topic, 3)["private_context"] is None
    assert sealed_row(db, topic, 1)["private_context"] is not None  # earlier versions are kept


# --- encryption at rest ------------------------------------------------------------------------

def database_bytes(app) -> bytes:
    path = Path(app.config["LOBBYTALKS"].db.path)
    return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())


@pytest.mark.sqlite_only
def test_the_database_files_hold_ciphertext_not_plaintext(app, db, settings, question):
    _, topic = question
    raw = database_bytes(app)
    assert PUBLIC.encode() in raw  # control: the row really is in these files
    assert SECRET.encode() not in raw
    key_id, blob = sealed_row(db, topic)
    assert key_id == "k1"
    assert len(blob) == 12 + len(SECRET.encode()) + 16  # nonce || ciphertext || tag
    keyring = Keyring.parse(settings.secret_key_path.read_text())
    assert keyring.decrypt(key_id, blob, topic_id=topic, version=1) == SECRET


@pytest.mark.sqlite_only
def test_a_backup_made_by_the_tool_stays_encrypted(app, settings, tmp_path, question):
    _, topic = question
    dest = tmp_path / "copy.db"
    assert cli.main(["backup", str(dest), "--data-dir", settings.data_dir]) == 0
    raw = dest.read_bytes()
    assert PUBLIC.encode() in raw and SECRET.encode() not in raw
    copy = sqlite3.connect(dest)
    key_id, blob = copy.execute("SELECT private_key_id, private_context FROM question_versions"
                                " WHERE topic_id = ?", (topic,)).fetchone()
    copy.close()
    keyring = Keyring.parse(settings.secret_key_path.read_text())
    assert keyring.decrypt(key_id, blob, topic_id=topic, version=1) == SECRET


def _tamper(db, topic, blob):
    with db.transaction() as conn:
        conn.execute("UPDATE question_versions SET private_context = :blob WHERE topic_id = :topic",
                     {"blob": blob, "topic": topic})


def test_a_tampered_ciphertext_fails_loudly(app, db, question, caplog):
    person, topic = question
    blob = bytearray(sealed_row(db, topic)["private_context"])
    blob[20] ^= 0x01
    _tamper(db, topic, bytes(blob))

    r = person.web_get(topic=topic)
    body = assert_web_error(r, 503)
    assert "私密背景无法解密" in body["error"]
    failure = assert_external_error(person.new_agent().get("get_context", topic=topic),
                                    503, "service_unavailable")
    assert "私密背景无法解密" in failure["error"]
    assert f"private context of '{topic}' v1" in caplog.text
    assert "does not authenticate" in caplog.text
    # nobody entitled to nothing is affected: the public view needs no decryption
    assert Person(app).web_get(topic=topic).status_code == 200


def test_a_ciphertext_moved_to_another_question_does_not_open(app, db, question):
    _, source = question
    person, target = ask_question(app, privateContext="另一题的私密背景")
    _tamper(db, target, sealed_row(db, source)["private_context"])
    assert_web_error(person.web_get(topic=target), 503)
    assert SECRET.encode() not in person.web_get(topic=target).data


def test_rotate_key_re_encrypts_and_a_restarted_app_still_reads(app, db, settings, question):
    person, topic = question
    other, second = ask_question(app, privateContext="第二个私密背景")
    before = {r[0]: r[1] for r in db.all(
        "SELECT topic_id, private_context FROM question_versions")}

    # rotate-key refuses while the database is in use (on PostgreSQL: any other session)
    app.config["LOBBYTALKS"].db.close()
    done = subprocess.run([sys.executable, "-m", "lobbytalks", "rotate-key",
                           "--data-dir", settings.data_dir],
                          capture_output=True, text=True, timeout=60,
                          env={**{k: v for k, v in os.environ.items()
                                  if not k.startswith("LOBBYTALKS_")},
                               **pgtest.env_for(settings.data_dir)})
    assert done.returncode == 0, done.stderr
    assert "re-encrypted 2 private context value(s) under key k2" in done.stdout
    assert SECRET not in done.stdout + done.stderr

    with open_database(settings.data_dir) as after:
        rows = after.all("SELECT topic_id, private_key_id, private_context"
                         " FROM question_versions ORDER BY topic_id")
    assert {r["private_key_id"] for r in rows} == {"k2"}
    assert all(r["private_context"] != before[r["topic_id"]] for r in rows)
    assert Keyring.parse(settings.secret_key_path.read_text()).ids == ("k1", "k2")
    assert all(SECRET.encode() not in bytes(r["private_context"]) for r in rows)
    if db.dialect == "sqlite":  # the file and its WAL too
        assert SECRET.encode() not in database_bytes(app)

    restarted = create_app(settings)
    for who, topic_id, text in ((person, topic, SECRET), (other, second, "第二个私密背景")):
        again = Person(restarted, username=who.username)
        assert again.web_post("login", username=who.username, password=who.password) \
            .status_code == 200
        assert again.web_get(topic=topic_id).get_json()["topic"]["privateContext"] == text


def test_a_wrong_key_at_startup_is_refused(settings, app, question):
    other_key = base64.b64encode(secrets.token_bytes(32)).decode()
    with pytest.raises(SecretKeyProblem, match="does not match this database"):
        create_app(settings.with_overrides(secret_key=other_key))


def test_a_lost_key_file_at_startup_is_refused_without_writing_a_new_one(settings, app, question):
    settings.secret_key_path.unlink()
    with pytest.raises(SecretKeyProblem, match="LOBBYTALKS_SECRET_KEY"):
        create_app(settings)
    assert not settings.secret_key_path.exists()


def test_a_malformed_key_at_startup_is_refused(settings, app):
    with pytest.raises(SecretKeyProblem, match="LOBBYTALKS_SECRET_KEY"):
        create_app(settings.with_overrides(secret_key="not-a-key"))


def test_the_plaintext_never_reaches_the_logs(app, db, caplog):
    caplog.set_level(logging.DEBUG)
    person, topic = ask_question(app, privateContext=SECRET)
    agent = person.new_agent()
    task = claim_ok(agent, topic)["task"]
    submit_ok(agent, task["id"])
    person.web_get(topic=topic)
    revise(person, topic, description="更多公开条件")
    _, outsider = contributor(app)
    outsider.get("get_context", topic=topic)
    assert_web_error(person.web_post("topic", title="x", privateContext=SECRET,
                                     community="nowhere"), 404)
    assert_web_error(person.web_post("revise", topic=topic, privateContext=SECRET * 100), 400)
    _tamper(db, topic, b"\x00" * 40)
    assert_web_error(person.web_get(topic=topic), 503)
    assert caplog.records  # control: logging was captured
    assert SECRET not in caplog.text
    assert count(db, "question_versions", "topic_id = :topic_id", {"topic_id": topic}) == 2
