"""Rules whose state must be read under the row lock, not before it (PostgreSQL).

Each of these once read what its rule decides on (a task's state, whether an answer is
shared, hidden or already asked about) before taking the lock, or changed it without the
lock at all, so that requests at the same moment on two processes each acted on what the
other was about to change: an answer stored against a lease another request had just
expired (a 503), and one notification or audit entry per request instead of one in all.
"""
from __future__ import annotations

import threading
import time
from typing import Any

import psycopg
import pytest

from conftest import advance, contributor, good_result, joined_person, race, settings_for
from test_races import Owner, database_url, pair, wait_for_a_lock_wait  # noqa: F401 (fixture)
from tests.redisserver import redis_server  # noqa: F401 (fixture)

pytestmark = pytest.mark.postgres


def count(pair, sql: str, *params: Any) -> int:
    return pair.value(f"SELECT COUNT(*) FROM {sql}", params)


def answered(owner: Owner, asker: Owner) -> str:
    """An answer by ``owner``'s agent to a new question of ``asker``."""
    agent = owner.agent()
    r = agent.submit(0, agent.task(asker.ask()))
    assert r.ok, r.text
    return r.json()["messageId"]


def test_asking_an_author_again_and_again_at_once_tells_them_once(pair):
    asker, author = Owner(pair), Owner(pair)
    for _ in range(2):
        message = answered(author, asker)
        responses = race([lambda i=i: asker.post(i, "/api/community", action="share_request",
                                                 message=message) for i in range(8)])
        assert [r.status_code for r in responses] == [200] * 8, [r.text for r in responses]
        assert sum(not r.json().get("replayed") for r in responses) == 1
        assert count(pair, "notifications WHERE kind = 'share_request' AND message_id = %s",
                     message) == 1


def test_sharing_again_at_once_offers_the_card_back_once(pair):
    asker, author = Owner(pair), Owner(pair)
    message = answered(author, asker)
    topic = pair.value("SELECT topic_id FROM messages WHERE id = %s", (message,))
    assert author.post(0, "/api/community", action="share", message=message, sharePublic=True).ok
    for action in ("card_preview", "card_publish"):
        assert asker.post(0, "/api/community", action=action, topic=topic).ok
    for _ in range(2):
        assert author.post(1, "/api/community", action="share", message=message,
                           sharePublic=False).ok  # the card is hidden
        before = count(pair, "notifications WHERE kind = 'card_republishable'")
        responses = race([lambda i=i: author.post(i, "/api/community", action="share",
                                                  message=message, sharePublic=True)
                          for i in range(8)])
        assert all(r.ok for r in responses), [r.text for r in responses]
        assert count(pair, "notifications WHERE kind = 'card_republishable'") == before + 1


def test_hiding_an_answer_at_once_is_recorded_once(pair):
    asker, admin = Owner(pair), Owner(pair)
    message = answered(Owner(pair), asker)
    name = admin.web.get(pair.base(0) + "/api/community", params={"action": "me"},
                         timeout=30).json()["user"]["username"]
    with psycopg.connect(pair.url) as conn:
        conn.execute("UPDATE users SET is_admin = 1 WHERE username = %s", (name,))
    responses = race([lambda i=i: admin.post(i, "/api/community", action="hide_answer",
                                             message=message, reason=f"spam {i}")
                      for i in range(8)])
    assert all(r.ok for r in responses), [r.text for r in responses]
    assert sum(not r.json().get("replayed") for r in responses) == 1
    assert count(pair, "audit_log WHERE action = 'hide_answer' AND target_id = %s", message) == 1
    [reason] = [r.request.body for r in responses if not r.json().get("replayed")]
    assert pair.value("SELECT hidden_reason FROM messages WHERE id = %s", (message,)) \
        in reason.decode()


@pytest.fixture
def clocked(request, tmp_path):
    clock = tmp_path / "clock-offset"
    clock.write_text("0")
    data_dir = tmp_path / "app"
    return settings_for(data_dir, database_url=database_url(request, data_dir),
                        clock_offset_file=str(clock)), clock


def test_the_owners_listing_never_expires_a_lease_a_submit_is_storing(clocked):
    """The submit read its task as leased (holding the owner's row) and waits for the
    question's row; meanwhile the lease runs out and the owner opens /agents. The listing
    waits for the owner's row as every change of a lease does, so the answer is stored
    and the lease is not expired under it (it used to be, and the submit answered 503)."""
    from lobbytalks import create_app

    settings, clock = clocked
    app = create_app(settings)
    topic = joined_person(app).ask(title="租约与列表")
    owner, agent = contributor(app)
    task = agent.claim(topic).get_json()["task"]["id"]
    answers: dict[str, Any] = {}
    with psycopg.connect(settings.database_url) as other:
        other.execute("SELECT 1 FROM topics WHERE id = %s FOR UPDATE", (topic,))
        submitting = threading.Thread(target=lambda: answers.setdefault("submit", agent.post(
            "submit_result", taskId=task, **good_result())))
        submitting.start()
        wait_for_a_lock_wait(settings)
        advance(clock, 31 * 60)  # the 30-minute lease is over
        listing = threading.Thread(target=lambda: answers.setdefault(
            "listing", owner.manage_get()))
        listing.start()
        time.sleep(0.5)  # the listing settles (the old way) or waits for the owner's row
        other.commit()
        submitting.join(30)
        listing.join(30)
    assert answers["submit"].status_code == 200, answers["submit"].get_json()
    assert answers["listing"].status_code == 200
    with psycopg.connect(settings.database_url) as conn:
        assert conn.execute("SELECT state FROM tasks WHERE id = %s", (task,)).fetchone() == ("done",)
        assert conn.execute("SELECT COUNT(*) FROM notifications WHERE kind = 'task_expired'"
                            ).fetchone() == (0,)


def db_value(settings, sql: str, *params: Any) -> Any:
    with psycopg.connect(settings.database_url) as conn:
        return conn.execute(sql, params).fetchone()[0]


def in_thread(call):
    """Start ``call`` in a thread; the returned function waits for its answer."""
    answers: list[Any] = []
    thread = threading.Thread(target=lambda: answers.append(call()))
    thread.start()
    return lambda: (thread.join(30), answers[0])[1]


def suspension_under_way(settings, title: str):
    """A member with an agent holding a lease, and an admin's suspension of that member
    held inside its transaction: another connection holds the task's row, which the
    suspension fails last, after ending the sessions. Returns (app, victim, agent, release):
    ``release()`` lets the suspension commit and returns its answer."""
    from lobbytalks import create_app
    from lobbytalks.services import accounts

    app = create_app(settings)
    topic = joined_person(app).ask(title=title)
    victim, agent = contributor(app)
    task = agent.claim(topic).get_json()["task"]["id"]
    admin = joined_person(app)
    assert accounts.set_admin(app.config["LOBBYTALKS"].db, admin.username, True)
    other = psycopg.connect(settings.database_url)
    other.execute("SELECT 1 FROM tasks WHERE id = %s FOR UPDATE", (task,))
    suspended = in_thread(lambda: admin.web_post("suspend_user", username=victim.username,
                                                 reason="spam"))
    wait_for_a_lock_wait(settings)

    def release():
        other.commit()
        other.close()
        return suspended()
    return app, victim, agent, release


def test_a_login_during_a_suspension_gets_no_session(clocked):
    app, victim, _, release = suspension_under_way(clocked[0], "停用与登录")
    logging_in = in_thread(lambda: app.test_client().post("/api/community", json={
        "action": "login", "username": victim.username, "password": victim.password}))
    time.sleep(0.5)  # the login checks the password, then waits for the person's row
    assert release().status_code == 200
    assert logging_in().status_code == 403
    assert db_value(clocked[0], "SELECT COUNT(*) FROM sessions s JOIN users u ON "
                                "u.id = s.user_id WHERE u.username = %s", victim.username) == 0


def test_a_token_asked_for_during_a_suspension_is_not_issued(clocked):
    _, victim, agent, release = suspension_under_way(clocked[0], "停用与轮换")
    rotating = in_thread(lambda: victim.manage_post("rotate", profile=agent.profile_id))
    registering = in_thread(lambda: victim.manage_post(
        "register", name="第二只", perspective="p", client="codex"))
    time.sleep(0.5)  # both wait for the person's row, which the suspension holds
    assert release().status_code == 200
    assert rotating().status_code == 403 and registering().status_code == 403
    assert db_value(clocked[0], "SELECT COUNT(*) FROM tokens t JOIN users u ON "
                                "u.id = t.user_id WHERE u.username = %s AND t.revoked = 0",
                    victim.username) == 0
    assert db_value(clocked[0], "SELECT COUNT(*) FROM profiles p JOIN users u ON "
                                "u.id = p.user_id WHERE u.username = %s", victim.username) == 1


def test_a_lease_ended_by_a_rejoin_while_its_submit_waits_is_refused_not_a_503(clocked):
    """The submit read its task as leased (holding the member's row), then waited for the
    question's; meanwhile the member joined the community again, which ends the leases from
    before the leave without holding the member's row. The submit went on with the task it
    had read: `complete_task` changed nothing and the answer was a 503 TypeError. It reads
    the task again once it holds it."""
    from lobbytalks import create_app

    settings, _ = clocked
    app = create_app(settings)
    topic = joined_person(app).ask(title="重新加入与提交")
    member, agent = contributor(app)
    task = agent.claim(topic).get_json()["task"]["id"]
    assert member.communities_post("leave", community="lobby").status_code == 200
    with psycopg.connect(settings.database_url) as other:
        other.execute("SELECT 1 FROM topics WHERE id = %s FOR UPDATE", (topic,))
        submitted = in_thread(lambda: agent.post("submit_result", taskId=task, **good_result()))
        wait_for_a_lock_wait(settings)
        member.join()  # ends the lease from before the leave
        other.commit()
        answer = submitted()
    assert answer.status_code == 409, answer.get_json()
    assert answer.get_json()["code"] == "task_terminal"
    assert db_value(settings, "SELECT state FROM tasks WHERE id = %s", task) == "failed"
    assert db_value(settings, "SELECT COUNT(*) FROM messages WHERE task_id = %s", task) == 0
