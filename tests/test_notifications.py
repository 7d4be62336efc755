"""Notifications: each event writes one in its own transaction, the inbox and the header
show only what the reader may read, and marking read touches only one's own rows."""
from __future__ import annotations

import re

import pytest
from conftest import Person, advance, asked_with_private, contributor, count, joined_person
from helpers import assert_web_error
from qa_helpers import answer, claim_ok, result

PRIVATE = "私密：生产库有 40 GB，每晚三点跑批量写入任务。"
CONCLUSION = "先用在线备份 API 做一致副本 [S1]，再在低峰时段校验完整性，避免直接复制数据库文件。"


def rows(db, user_id=None):
    sql = "SELECT user_id, kind, topic_id, message_id, task_id, read_at FROM notifications"
    if user_id is not None:
        return db.all(sql + " WHERE user_id = :user_id ORDER BY id", {"user_id": user_id})
    return db.all(sql + " ORDER BY id")


def user_id(db, person):
    return db.value("SELECT id FROM users WHERE username = :username", {"username": person.username})


def inbox(person):
    r = person.web_get(action="notifications")
    assert r.status_code == 200, r.get_json()
    return r.get_json()


@pytest.fixture
def asked(app):
    """An asker with a question carrying private context, and another member's agent."""
    return asked_with_private(app, "怎样给运行中的 SQLite 做备份？", PRIVATE, "备份虾")


# --- an answer arrives --------------------------------------------------------------------

def test_an_answer_notifies_the_asker_in_the_same_write(app, db, asked):
    asker, topic, author, agent = asked
    message = answer(agent, topic, conclusion=CONCLUSION)
    assert [tuple(r) for r in rows(db)] == [
        (user_id(db, asker), "answer", topic, message, None, None)]
    page = inbox(asker)
    assert page["unread"] == 1
    [item] = page["notifications"]
    assert item["kind"] == "answer" and item["actor"] == "备份虾" and not item["read"]
    assert item["topicTitle"] == "怎样给运行中的 SQLite 做备份？"
    assert item["link"] == f"/q/{topic}?answer={message}#m-{message}"
    # The inbox names the agent and the public title, never the answer or the private context.
    text = str(page)
    assert CONCLUSION not in text and PRIVATE not in text
    assert inbox(author)["notifications"] == []


def test_ones_own_agent_answering_is_no_news(app, db):
    asker = joined_person(app)
    topic = asker.ask()
    answer(asker.new_agent("自己的虾"), topic)
    assert count(db, "notifications") == 0


def test_a_failed_insert_of_the_notification_rolls_the_answer_back(app, db, asked, monkeypatch):
    asker, topic, _, agent = asked
    task = claim_ok(agent, topic)["task"]["id"]
    from lobbytalks.services import results

    def broken(*args, **kwargs):
        raise RuntimeError("notification store unavailable")
    monkeypatch.setattr(results, "notify", broken)
    r = agent.post("submit_result", taskId=task, **result())
    assert r.status_code == 503
    assert count(db, "messages") == 0 and count(db, "notifications") == 0
    assert db.value("SELECT state FROM tasks WHERE id = :id", {"id": task}) == "leased"


# --- the inbox page and the header ---------------------------------------------------------

def test_header_counts_unread_and_the_inbox_page_lists_them(app, asked):
    asker, topic, _, agent = asked
    answer(agent, topic, conclusion=CONCLUSION)
    home = asker.http.get("/").get_data(as_text=True)
    assert re.search(r'class="badge unread-count"[^>]*>1</span>', home)
    page = asker.http.get("/inbox?lang=en").get_data(as_text=True)
    assert "备份虾 answered your question “怎样给运行中的 SQLite 做备份？”" in page
    assert CONCLUSION not in page and PRIVATE not in page
    zh = asker.http.get("/inbox?lang=zh").get_data(as_text=True)
    assert "备份虾 回答了你的问题“怎样给运行中的 SQLite 做备份？”" in zh


def test_the_header_count_stops_at_99_plus(app, db, asked, monkeypatch):
    asker, topic, _, agent = asked
    from lobbytalks.services import notifications
    monkeypatch.setattr(notifications, "BADGE_CAP", 3)
    for n in range(3):
        answer(contributor(app, f"虾{n}")[1], topic)
    assert re.search(r'class="badge unread-count"[^>]*>2\+</span>',
                     asker.http.get("/").get_data(as_text=True))
    assert inbox(asker)["unread"] == 3  # the API counts exactly
    # The inbox page says what the header says: counting a large inbox stops at the cap.
    page = asker.http.get("/inbox?lang=en").get_data(as_text=True)
    assert 'id="inbox-unread">Unread: 2+</p>' in page
    assert "notifications_read" in page  # "mark all read" is offered


def test_the_header_count_alone_for_pages_left_open(app, db, asked, monkeypatch):
    """A page's script asks for the header's count (and nothing else) to keep it current."""
    asker, topic, author, agent = asked
    assert asker.web_get(action="unread").get_json() == {"badge": ""}
    answer(agent, topic)
    assert asker.web_get(action="unread").get_json() == {"badge": "1"}
    assert author.web_get(action="unread").get_json() == {"badge": ""}  # the reader's own
    from lobbytalks.services import notifications
    monkeypatch.setattr(notifications, "BADGE_CAP", 2)
    answer(contributor(app, "第二只虾")[1], topic)
    assert asker.web_get(action="unread").get_json() == {"badge": "1+"}  # as the header
    asker.web_post("notifications_read")
    assert asker.web_get(action="unread").get_json() == {"badge": ""}
    # a page drawn for another account gets no count of this one
    other = asker.http.get("/api/community", query_string={"action": "unread"},
                           headers={"X-LobbyTalks-Viewer": "999999"})
    assert_web_error(other, 401)
    assert other.headers["X-LobbyTalks-Viewer-Changed"] == "1"
    assert asker.http.get("/").get_data(as_text=True).count(
        'data-unread-label="{n} 条未读通知"') == 1


def test_visitors_get_no_inbox(app, asked):
    visitor = Person(app)
    r = visitor.http.get("/inbox")
    assert r.status_code == 302 and "/login?next=/inbox" in r.headers["Location"]
    assert_web_error(visitor.web_get(action="notifications"), 401)
    assert_web_error(visitor.web_get(action="unread"), 401)
    assert "unread-count" not in visitor.http.get("/").get_data(as_text=True)


def test_mark_one_then_all_read(app, db, asked):
    asker, topic, _, agent = asked
    answer(agent, topic)
    answer(contributor(app, "第二只虾")[1], topic)
    first, second = (r["id"] for r in inbox(asker)["notifications"])
    r = asker.web_post("notifications_read", notification=first)
    assert r.status_code == 200 and r.get_json() == {"ok": True, "unread": 1}
    assert [r["read_at"] is not None for r in rows(db)] == [False, True]
    r = asker.web_post("notifications_read")
    assert r.get_json() == {"ok": True, "unread": 0}
    assert all(r["read_at"] is not None for r in rows(db))
    assert "unread-count" not in asker.http.get("/").get_data(as_text=True)
    page = asker.http.get("/inbox?lang=en").get_data(as_text=True)
    assert 'id="inbox-unread">Unread: 0</p>' in page
    assert '"action": "notifications_read"}' not in page and "Mark all read" not in page


def test_mark_all_read_on_the_page_leaves_what_came_after_it_unread(app, db, asked):
    """The inbox's "Mark all read" marked every unread notification, one that arrived after
    the page was shown as well: read without ever being seen."""
    import html
    import json
    asker, topic, _, agent = asked
    answer(agent, topic)
    page = asker.http.get("/inbox?lang=en").get_data(as_text=True)
    [body] = [json.loads(html.unescape(b)) for b in re.findall(r"data-body='([^']*)'", page)
              if "upTo" in html.unescape(b)]
    [shown] = inbox(asker)["notifications"]
    assert body == {"action": "notifications_read", "upTo": shown["id"]}
    answer(contributor(app, "后来的虾")[1], topic)  # arrives while the page is open
    r = asker.web_post(body["action"], upTo=body["upTo"])
    assert r.status_code == 200 and r.get_json() == {"ok": True, "unread": 1}
    assert [r["read_at"] is not None for r in rows(db)] == [True, False]


def test_an_older_inbox_page_offers_no_mark_all_read(app, db, asked, monkeypatch):
    """Its button covered up to the newest notification of all: one that arrived after the
    first page was read, shown on no page the reader opened, was marked read by it."""
    from lobbytalks.services import notifications
    monkeypatch.setattr(notifications, "INBOX_PAGE_SIZE", 1)
    asker, topic, _, agent = asked
    answer(agent, topic)
    answer(contributor(app, "第二只虾")[1], topic)
    first = inbox(asker)
    newest = asker.http.get("/inbox?lang=en").get_data(as_text=True)
    older = asker.http.get(f"/inbox?before={first['next']}&lang=en").get_data(as_text=True)
    assert "Mark all read" in newest and '"upTo":%d' % first["notifications"][0]["id"] in newest
    assert "第二只虾" not in older and "Mark all read" not in older


def test_nobody_marks_or_reads_another_persons_notifications(app, db, asked):
    asker, topic, author, agent = asked
    answer(agent, topic)
    [item] = inbox(asker)["notifications"]
    assert_web_error(author.web_post("notifications_read", notification=item["id"]), 404)
    assert_web_error(author.web_post("notifications_read", notification=10**9), 404)
    assert rows(db)[0]["read_at"] is None
    author.web_post("notifications_read")  # "all" means all of one's own
    assert rows(db)[0]["read_at"] is None


@pytest.mark.parametrize("body", [
    {"notification": "1"}, {"notification": 0}, {"notification": -3}, {"notification": 2**60},
    {"notification": 1, "extra": True}, {"upTo": 0}, {"upTo": "5"}, {"upTo": 1.5},
    {"notification": 1, "upTo": 1},
])
def test_bad_mark_read_bodies_are_refused(app, db, asked, body):
    asker, topic, _, agent = asked
    answer(agent, topic)
    assert_web_error(asker.web_post("notifications_read", **body), 400)
    assert rows(db)[0]["read_at"] is None


def test_inbox_pages_by_keyset(app, db, asked, monkeypatch):
    from lobbytalks.services import notifications
    monkeypatch.setattr(notifications, "INBOX_PAGE_SIZE", 2)
    asker, topic, _, _ = asked
    for n in range(3):
        answer(contributor(app, f"虾{n}")[1], topic)
    first = inbox(asker)
    assert [i["actor"] for i in first["notifications"]] == ["虾2", "虾1"]
    rest = asker.web_get(action="notifications", before=first["next"]).get_json()
    assert [i["actor"] for i in rest["notifications"]] == ["虾0"] and rest["next"] is None
    page = asker.http.get(f"/inbox?before={first['next']}&lang=en").get_data(as_text=True)
    assert "虾0" in page and "虾2" not in page
    # a later page leads back to the newest; past the last one it says so, not "none yet"
    assert 'href="/inbox">← Newest notifications</a>' in page
    assert "Older notifications" not in page
    oldest = rest["notifications"][-1]["id"]
    past = asker.http.get(f"/inbox?before={oldest}&lang=en").get_data(as_text=True)
    assert "There are no older notifications." in past and "No notifications yet" not in past
    assert 'href="/inbox">Newest notifications</a>' in past
    assert "Newest notifications" not in asker.http.get("/inbox?lang=en").get_data(as_text=True)


BAD_CURSORS = ["99999999999999999999999", "-1", "0", "abc", "1e5", "1.5", "²", "٣", " 1"]


@pytest.mark.parametrize("before", BAD_CURSORS)
def test_a_hand_edited_cursor_is_refused_by_the_api_and_the_page_shows_the_first(
        app, asked, before):
    """The API had read any cursor it could not use as "the first page": a client with a
    broken cursor went round page one for ever, and "²" (a digit to str.isdigit) was a 500."""
    asker, topic, _, agent = asked
    answer(agent, topic)
    assert_web_error(asker.web_get(action="notifications", before=before), 400, "invalid_request")
    page = asker.http.get("/inbox", query_string={"before": before, "lang": "en"})
    assert page.status_code == 200 and page.get_data(as_text=True).count('class="item notification') == 1
    assert len(asker.web_get(action="notifications", before="").get_json()["notifications"]) == 1


# --- tasks that fail or expire ---------------------------------------------------------------

def test_a_failed_task_tells_its_owner(app, db, asked):
    _, topic, author, agent = asked
    task = claim_ok(agent, topic)["task"]["id"]
    assert agent.post("fail_task", taskId=task, error="工具超时").status_code == 200
    assert [tuple(r) for r in rows(db)] == [
        (user_id(db, author), "task_failed", topic, None, task, None)]
    [item] = inbox(author)["notifications"]
    assert item["actor"] == "备份虾" and item["link"] == f"/tasks?topic={topic}"
    # Replaying the same failure tells nobody twice.
    assert agent.post("fail_task", taskId=task, error="工具超时").status_code == 200
    assert count(db, "notifications") == 1


def test_expiry_is_told_where_it_is_settled(app, db, asked, clock_file):
    _, topic, author, agent = asked
    task = claim_ok(agent, topic)["task"]["id"]
    advance(clock_file, 31 * 60)
    assert agent.get("get_task_status", taskId=task).get_json()["task"]["state"] == "expired"
    assert [tuple(r) for r in rows(db)] == [
        (user_id(db, author), "task_expired", topic, None, task, None)]
    # Later settlements find nothing new to tell.
    author.manage_get(action="tasks")
    author.http.get("/tasks")
    assert count(db, "notifications") == 1


def test_expiry_settled_by_the_owners_task_list(app, db, asked, clock_file):
    _, topic, author, agent = asked
    task = claim_ok(agent, topic)["task"]["id"]
    advance(clock_file, 31 * 60)
    assert author.http.get("/tasks").status_code == 200
    assert [(r["kind"], r["task_id"]) for r in rows(db)] == [("task_expired", task)]


def test_a_lease_of_an_expired_token_fails_and_tells_the_owner(app, db, asked):
    _, topic, author, agent = asked
    task = claim_ok(agent, topic)["task"]["id"]
    with db.transaction() as conn:  # the token ran out, the lease did not
        conn.execute("UPDATE tokens SET expires = created")
    author.manage_get()
    assert [(r["kind"], r["task_id"], r["user_id"]) for r in rows(db)] == [
        ("task_failed", task, user_id(db, author))]


def test_cancelling_ones_own_task_tells_nobody(app, db, asked):
    _, topic, author, agent = asked
    task = claim_ok(agent, topic)["task"]["id"]
    assert author.manage_post("cancel_task", taskId=task).status_code == 200
    assert count(db, "notifications") == 0


# --- e-mail settings ---------------------------------------------------------------------------

def test_mail_settings_are_saved_for_oneself_only(app, db, asked):
    asker, _, author, _ = asked
    r = asker.web_post("notify_settings", email=" me@example.org ", emailNotify=True)
    assert r.status_code == 200 and r.get_json() == {
        "ok": True, "email": "me@example.org", "emailNotify": True, "emailConfirmed": False,
        "codeSent": True}
    assert tuple(db.one("SELECT email, email_notify FROM users WHERE username = :username",
                            {"username": asker.username})) == ("me@example.org", 1)
    assert inbox(asker)["email"] == "me@example.org"
    assert inbox(author)["email"] == ""
    page = asker.http.get("/inbox").get_data(as_text=True)
    assert 'value="me@example.org"' in page and "checked" in page
    assert "me@example.org" not in author.http.get("/inbox").get_data(as_text=True)


@pytest.mark.parametrize("fields", [
    {"email": "not an address", "emailNotify": False},
    {"email": "a@b", "emailNotify": True},
    {"email": "", "emailNotify": True},
    {"email": "x" * 250 + "@example.org", "emailNotify": True},
    # a list of addresses, or a display name: one notification mailed to many
    {"email": "root,postmaster,me@example.org", "emailNotify": True},
    {"email": "list:,me@example.org", "emailNotify": True},
    {"email": "me@example.org;you@example.org", "emailNotify": True},
    {"email": "Me <me@example.org>", "emailNotify": True},
    {"email": '"><script>x</script>@example.org', "emailNotify": True},
    {"email": "me@example.org", "emailNotify": "yes"},
    {"email": "me@example.org"},
])
def test_bad_mail_settings_are_refused_and_nothing_is_saved(app, db, asked, fields):
    asker = asked[0]
    assert_web_error(asker.web_post("notify_settings", **fields), 400)
    assert tuple(db.one("SELECT email, email_notify FROM users WHERE username = :username",
                            {"username": asker.username})) == ("", 0)


def test_mail_settings_need_a_login(app):
    assert_web_error(Person(app).web_post("notify_settings", email="", emailNotify=False), 401)


def test_notifications_queue_mail_only_for_people_who_asked_for_it(app, db, asked):
    asker, topic, _, agent = asked
    answer(agent, topic)
    assert count(db, "mail_outbox") == 0
    asker.mail_to("me@example.org")
    answer(contributor(app, "第二只虾")[1], topic)
    assert count(db, "mail_outbox") == 1
