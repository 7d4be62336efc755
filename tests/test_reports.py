"""Reports: a reader tells the admins what is wrong with a question or an answer; the admins
see the queue on /admin (public facts and the reporter's reason, never the discussion) and
settle a report by hand or by hiding what it names."""
from __future__ import annotations

import json
import re
from html import unescape

import pytest

from conftest import Person, contributor, joined_person
from helpers import assert_web_error
from lobbytalks import create_app
from qa_helpers import answer
from test_moderation import PRIVATE, audit_rows, discussion, make_admin  # noqa: F401 (fixture)

REASON = "这条回答在推销一个付费课程，和问题无关。"


@pytest.fixture
def admin(app) -> Person:
    return make_admin(app)


def report(person: Person, topic: str, message: str | None = None, reason: str = REASON):
    fields = {"topic": topic, "reason": reason}
    if message is not None:
        fields["message"] = message
    return person.web_post("report", **fields)


def waiting(db) -> list[tuple]:
    return [tuple(r) for r in db.all(
        "SELECT u.username, r.topic_id, r.message_id, r.reason FROM reports r"
        " JOIN users u ON u.id = r.reporter_id WHERE r.settled_at IS NULL ORDER BY r.id")]


def admin_page(admin: Person) -> str:
    r = admin.http.get("/admin")
    assert r.status_code == 200
    return r.get_data(as_text=True)


# --- sending a report ----------------------------------------------------------------------

def test_the_asker_reports_an_answer_and_the_admins_see_who_why_and_where_never_the_answer(
        asker, admin, discussion, db):
    topic, message = discussion["topic"], discussion["message"]
    r = report(asker, topic, message)
    assert r.status_code == 200, r.get_json()
    body = r.get_json()
    assert body == {"ok": True, "reported": True, "id": body["id"]}
    assert re.fullmatch(r"rep_[a-z0-9]{20}", body["id"])  # opaque: no count of the site's reports
    assert waiting(db) == [(asker.username, topic, message, REASON)]

    page = admin_page(admin)
    item = re.search(rf'<li class="item admin-report" id="admin-r-{body["id"]}">(.*?)</li>', page, re.S)
    assert item, page
    text = unescape(item.group(1))
    assert REASON in text and asker.username in text and "答题虾" in text
    assert f'href="/q/{topic}"' in item.group(1)  # the question: the answer is not theirs to read
    assert f'<a class="person" href="/u/{asker.username}">' in item.group(1)
    assert message in text  # the id the hide form and the "hide by id" field take
    assert "待处理的举报（1）" in page or "Reports waiting (1)" in page
    # being an admin still reads no discussion: the conclusion is not in a published card
    assert "在线备份 API" not in text and PRIVATE not in page


def test_sending_it_again_while_it_waits_changes_nothing(asker, discussion, db):
    topic, message = discussion["topic"], discussion["message"]
    assert report(asker, topic, message).status_code == 200
    again = report(asker, topic, message, reason="再说一次")
    assert again.status_code == 200
    assert again.get_json() == {"ok": True, "reported": True, "replayed": True}
    assert len(waiting(db)) == 1
    # the same person's report on the question is another thing
    other = joined_person(asker.app)
    assert report(other, topic).status_code == 200
    assert report(other, topic).get_json()["replayed"] is True
    assert len(waiting(db)) == 2


def test_anyone_signed_in_who_sees_a_question_may_report_it_but_not_its_asker(app, asker, db):
    topic = asker.ask()
    stranger = Person(app).register()  # no member of its community: the question is public
    r = report(stranger, topic, reason="标题里是广告链接")
    assert r.status_code == 200, r.get_json()
    assert waiting(db) == [(stranger.username, topic, None, "标题里是广告链接")]
    assert_web_error(report(asker, topic), 400, "invalid_request")
    assert_web_error(Person(app).web_post("report", topic=topic, reason=REASON), 401)
    assert_web_error(report(stranger, "t_doesnotexist"), 404, "not_found")


def test_an_answer_is_reported_only_by_those_who_may_read_it(app, asker, member, discussion, db):
    topic, message = discussion["topic"], discussion["message"]
    outsider = joined_person(app)  # a member, but no reader of this discussion
    unknown = assert_web_error(report(outsider, topic, "msg_doesnotexist"), 404, "not_found")
    assert assert_web_error(report(outsider, topic, message), 404, "not_found") == unknown
    # nor one's own agent's answer, nor an answer named with another question
    assert_web_error(report(member, topic, message), 400, "invalid_request")
    elsewhere = asker.ask(title="另一个问题：WAL 文件多大算正常？")
    assert_web_error(report(asker, elsewhere, message), 404, "not_found")
    assert waiting(db) == []


def test_a_hidden_answer_is_as_unknown_as_a_missing_one(asker, admin, discussion, db):
    topic, message = discussion["topic"], discussion["message"]
    assert admin.web_post("hide_answer", message=message, reason="灌水").status_code == 200
    assert_web_error(report(asker, topic, message), 404, "not_found")
    assert waiting(db) == []


def test_nothing_of_a_question_taken_down_is_reported(app, asker, admin, discussion, db):
    topic, message = discussion["topic"], discussion["message"]
    assert admin.web_post("hide_question", topic=topic, reason="违规").status_code == 200
    assert_web_error(report(Person(app).register(), topic), 404, "not_found")
    # its asker still reads it, and is told why nothing more goes out about it
    assert_web_error(report(asker, topic, message), 409, "topic_unavailable")
    assert waiting(db) == []


@pytest.mark.parametrize("reason, why", [
    ("", "empty"), ("   \n ", "spaces only"), ("很" * 501, "over 500 characters"),
])
def test_a_report_needs_a_reason_of_at_most_500_characters(asker, discussion, db, reason, why):
    r = report(asker, discussion["topic"], discussion["message"], reason=reason)
    assert_web_error(r, 400, "invalid_request")
    assert waiting(db) == []


def test_a_reason_may_span_lines_and_must_not_carry_a_key(asker, discussion, db):
    topic, message = discussion["topic"], discussion["message"]
    key = "sk-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0"
    assert_web_error(report(asker, topic, message, reason=f"它贴出了密钥 {key}"), 400,
                     "sensitive_content")
    assert waiting(db) == []
    lines = "第一点：推销。\n第二点：来源是假的。"
    assert report(asker, topic, message, reason=lines).status_code == 200
    assert waiting(db)[0][3] == lines


def test_reports_have_a_budget_of_their_own(settings, tmp_path):
    app = create_app(settings.with_overrides(rate_report="2/hour"))
    asker = joined_person(app)
    topics = [asker.ask(title=f"问题 {n}：SQLite 的备份怎么做？") for n in range(3)]
    reporter = Person(app).register()
    assert [report(reporter, t).status_code for t in topics[:2]] == [200, 200]
    r = report(reporter, topics[2])
    assert_web_error(r, 429, "rate_limited")
    # their other web writes keep their own budget
    assert reporter.web_post("notify_settings", email="", emailNotify=False).status_code == 200


# --- settling ------------------------------------------------------------------------------

def test_hiding_the_answer_settles_the_reports_on_it_and_no_other(app, asker, admin, discussion, db):
    topic, message = discussion["topic"], discussion["message"]
    on_answer = report(asker, topic, message).get_json()["id"]
    on_question = report(Person(app).register(), topic).get_json()["id"]
    assert admin.web_post("hide_answer", message=message, reason="推销").status_code == 200
    assert [r[2] for r in waiting(db)] == [None]
    page = admin_page(admin)
    assert f'id="admin-r-{on_answer}"' not in page and f'id="admin-r-{on_question}"' in page
    settled_by = db.value("SELECT u.username FROM reports r JOIN users u ON u.id = r.settled_by"
                          " WHERE r.id = :id", {"id": on_answer})
    assert settled_by == admin.username


def test_taking_the_question_down_settles_every_report_on_it_and_its_answers(
        app, asker, admin, discussion, db):
    topic, message = discussion["topic"], discussion["message"]
    report(asker, topic, message)
    report(Person(app).register(), topic)
    kept = report(Person(app).register(), asker.ask(title="别的问题：VACUUM 要多久？"))
    assert admin.web_post("hide_question", topic=topic, reason="违规").status_code == 200
    assert [r[1] for r in waiting(db)] == [db.value("SELECT topic_id FROM reports WHERE id = :id",
                                                    {"id": kept.get_json()["id"]})]


def test_an_admin_marks_a_report_handled_audited_once(asker, admin, member, discussion, db):
    rid = report(asker, discussion["topic"], discussion["message"]).get_json()["id"]
    assert_web_error(member.web_post("settle_report", report=rid), 403, "forbidden")
    r = admin.web_post("settle_report", report=rid, reason="不是推销，是官方文档")
    assert r.status_code == 200 and r.get_json() == {"ok": True, "id": rid, "settled": True}
    again = admin.web_post("settle_report", report=rid)
    assert again.get_json() == {"ok": True, "id": rid, "settled": True, "replayed": True}
    assert waiting(db) == []
    assert audit_rows(db) == [("settle_report", "report", str(rid), "不是推销，是官方文档",
                               admin.username)]
    assert_web_error(admin.web_post("settle_report", report="rep_doesnotexist"), 404, "not_found")
    assert_web_error(admin.web_post("settle_report", report=7), 400, "invalid_request")
    # settled, the reporter may report it again (something new happened)
    assert report(asker, discussion["topic"], discussion["message"]).get_json().get("replayed") is None
    assert 'class="item admin-report"' in admin_page(admin)


# --- the pages ------------------------------------------------------------------------------

def test_the_question_page_offers_a_report_where_one_may_be_sent(app, asker, member, discussion):
    topic, message = discussion["topic"], discussion["message"]

    def forms(person) -> tuple[bool, bool]:
        page = person.http.get(f"/q/{topic}").get_data(as_text=True)
        return (f'id="report-{message}"' in page, f'id="report-{topic}"' in page)

    assert forms(asker) == (True, False)          # others' answers, not one's own question
    assert forms(member) == (False, True)         # not one's own agent's answer
    assert forms(Person(app).register()) == (False, True)  # no reader: the question only
    anonymous = app.test_client().get(f"/q/{topic}").get_data(as_text=True)
    assert 'data-action="report"' not in anonymous


def test_the_admin_page_gives_each_report_its_own_form_ids(app, asker, admin, discussion):
    topic, message = discussion["topic"], discussion["message"]
    rid = report(asker, topic, message).get_json()["id"]
    qid = report(Person(app).register(), topic).get_json()["id"]
    page = admin_page(admin)
    ids = re.findall(r'\sid="([^"]+)"', page)
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
    assert f'id="r{rid}-hide_answer-{message}"' in page
    assert f'id="r{qid}-hide_question-{topic}"' in page
    assert f'name="report" value="{rid}"' in page


def test_my_data_download_holds_the_reports_i_sent_and_no_one_elses(app, asker, admin, discussion):
    topic, message = discussion["topic"], discussion["message"]
    rid = report(asker, topic, message).get_json()["id"]
    other = Person(app).register()
    report(other, topic, reason="别人的举报")
    admin.web_post("settle_report", report=rid, reason="已看过")
    data = json.loads(asker.http.get("/settings/data.json").get_data())
    assert data["reports"] == [{"id": rid, "topic": topic, "message": message, "reason": REASON,
                                "created": data["reports"][0]["created"],
                                "settled": data["reports"][0]["settled"]}]
    assert isinstance(data["reports"][0]["settled"], int)
    assert "别人的举报" not in json.dumps(data, ensure_ascii=False)
    assert json.loads(other.http.get("/settings/data.json").get_data())["reports"][0]["settled"] is None


def test_an_admins_header_counts_the_reports_waiting_on_every_page(app, asker, admin, discussion):
    def badge(person) -> str | None:
        page = person.http.get("/communities").get_data(as_text=True)
        found = re.search(r'href="/admin"[^>]*>[^<]*<span class="badge unread-count" '
                          r'aria-label="([^"]+)">(\d+)</span>', page)
        return found and f"{found.group(1)}|{found.group(2)}"

    assert badge(admin) is None
    rid = report(asker, discussion["topic"], discussion["message"]).get_json()["id"]
    report(Person(app).register(), discussion["topic"])
    assert badge(admin) in ("2 条举报待处理|2", "Reports waiting: 2|2")
    assert badge(asker) is None and 'href="/admin"' not in asker.http.get("/").get_data(as_text=True)
    admin.web_post("settle_report", report=rid)
    assert badge(admin).endswith("|1")


def test_settling_is_not_counted_against_the_admins_budget(settings):
    """Other people's reports (each on their own budget) must not use up an admin's writes."""
    app = create_app(settings.with_overrides(rate_web_write="1/hour"))
    admin, asker = make_admin(app), joined_person(app)
    topic = asker.ask()
    ids = [report(Person(app).register(), topic).get_json()["id"] for _ in range(3)]
    assert [admin.web_post("settle_report", report=rid).status_code for rid in ids] == [200] * 3
    # the admin's other actions are counted as before
    assert admin.web_post("hide_question", topic=topic, reason="广告").status_code == 200
    assert_web_error(admin.web_post("unhide_question", topic=topic), 429, "rate_limited")


def test_suspending_a_person_settles_the_reports_they_sent(app, asker, admin, discussion, db):
    flooder = Person(app).register()
    for n in range(3):
        report(flooder, asker.ask(title=f"第 {n} 个问题：备份要多久？"))
    kept = report(Person(app).register(), discussion["topic"]).get_json()["id"]
    assert admin.web_post("suspend_user", username=flooder.username, reason="乱举报").status_code == 200
    assert [r[0] for r in waiting(db)] == [db.value("SELECT u.username FROM reports r JOIN users u"
                                                    " ON u.id = r.reporter_id WHERE r.id = :id",
                                                    {"id": kept})]


def test_the_queue_is_served_oldest_first_and_says_how_many_are_not_shown(app, admin, monkeypatch):
    from lobbytalks.services import reports
    monkeypatch.setattr(reports, "WAITING_ON_PAGE", 2)
    asker = joined_person(app)
    topics = [asker.ask(title=f"问题 {n}：SQLite 备份") for n in range(3)]
    ids = [report(Person(app).register(), t).get_json()["id"] for t in topics]
    page = admin_page(admin)
    shown = re.findall(r'id="admin-r-(rep_[a-z0-9]+)"', page)
    assert shown == ids[:2]  # the oldest two; the newest waits its turn
    assert re.search(r'id="reports-shown">[^<]*\b2\b[^<]*\b3\b', page), page


# --- the admins hear of it ------------------------------------------------------------------

def inbox_of(person: Person, kind: str = "report_settled") -> list[dict]:
    """The person's notifications of ``kind``: a report settled, or (admins) received."""
    r = person.web_get(action="notifications")
    assert r.status_code == 200, r.get_json()
    return [n for n in r.get_json()["notifications"] if n["kind"] == kind]


def test_every_admin_but_its_sender_hears_of_a_new_report_and_is_mailed_if_they_asked(
        app, asker, admin, discussion, db):
    """The queue on /admin waited unseen until an admin next opened the page."""
    topic, message = discussion["topic"], discussion["message"]
    second = make_admin(app)
    second.mail_to("second@example.org")
    assert report(asker, topic, message).status_code == 200
    for person in (admin, second):
        [told] = inbox_of(person, "report_received")
        assert told["topic"] == topic and told["cause"] == "answer" and told["read"] is False
        assert told["link"] == "/admin#admin-reports" and told["actor"] is None
        assert told["topicTitle"] == db.value("SELECT title FROM topics WHERE id = :t", {"t": topic})
    assert inbox_of(asker, "report_received") == []  # news to the admins only
    mailed = db.all("SELECT n.user_id FROM mail_outbox o JOIN notifications n"
                    " ON n.id = o.notification_id WHERE n.kind = 'report_received'")
    assert [r[0] for r in mailed] == [second.web_get(action="me").get_json()["user"]["id"]]
    page = unescape(admin.http.get("/inbox?lang=en").get_data(as_text=True))
    assert "Someone reported an answer to “" in page and 'href="/admin#admin-reports"' in page
    # neither who sent it nor why: that is on /admin, for admins still
    assert asker.username not in page.split('id="main"')[1] and REASON not in page
    # sent again while it waits: no news; another person's report on the question: news
    assert report(asker, topic, message).get_json()["replayed"] is True
    assert len(inbox_of(admin, "report_received")) == 1
    assert report(joined_person(app), topic).status_code == 200
    assert [n["cause"] for n in inbox_of(admin, "report_received")] == [None, "answer"]


def test_an_admins_own_report_is_no_news_to_them(app, asker, admin, discussion):
    from lobbytalks.services import accounts
    assert accounts.set_admin(app.config["LOBBYTALKS"].db, asker.username, True)
    assert report(asker, discussion["topic"], discussion["message"]).status_code == 200
    assert inbox_of(asker, "report_received") == [] and len(inbox_of(admin, "report_received")) == 1


def test_a_report_on_a_question_since_taken_down_is_told_without_its_title(
        app, asker, admin, discussion):
    topic = discussion["topic"]
    assert report(joined_person(app), topic).status_code == 200
    assert admin.web_post("hide_question", topic=topic, reason="违规").status_code == 200
    [told] = inbox_of(admin, "report_received")
    assert told["topicTitle"] is None
    page = unescape(admin.http.get("/inbox?lang=en").get_data(as_text=True))
    assert "A new report came in" in page


# --- the reporter hears back ----------------------------------------------------------------

def test_the_reporter_is_told_once_it_is_handled_never_how_or_by_whom(
        app, asker, admin, discussion):
    topic, message = discussion["topic"], discussion["message"]
    rid = report(asker, topic, message).get_json()["id"]
    assert inbox_of(asker) == []  # waiting: nothing to tell yet
    assert admin.web_post("settle_report", report=rid, reason="是官方文档").status_code == 200
    [told] = inbox_of(asker)
    assert told["topic"] == topic and told["cause"] == "answer" and told["read"] is False
    assert told["link"] == f"/q/{topic}" and told["actor"] is None
    inbox = asker.http.get("/inbox?lang=en").get_data(as_text=True)
    assert "The admins handled your report of an answer to" in unescape(inbox)
    assert admin.username not in inbox and "是官方文档" not in inbox
    # settling it again tells nobody twice
    admin.web_post("settle_report", report=rid)
    assert len(inbox_of(asker)) == 1


def test_hiding_what_was_reported_tells_each_reporter_once(app, asker, admin, discussion):
    topic, message = discussion["topic"], discussion["message"]
    others = [Person(app).register() for _ in range(2)]
    report(asker, topic, message)
    report(asker, topic)  # the asker may not report their own question: refused, not stored
    for person in others:
        report(person, topic)
    assert admin.web_post("hide_answer", message=message, reason="推销").status_code == 200
    assert [n["cause"] for n in inbox_of(asker)] == ["answer"]
    assert all(inbox_of(person) == [] for person in others)  # theirs still wait
    assert admin.web_post("hide_question", topic=topic, reason="违规").status_code == 200
    for person in others:
        [told] = inbox_of(person)
        assert told["cause"] is None
        # a question taken down keeps its title from everyone but its asker
        assert told["topicTitle"] is None
        page = unescape(person.http.get("/inbox?lang=en").get_data(as_text=True))
        # and "taken down" would say how the report was settled: the notice says neither
        assert "The admins handled one of your reports" in page and "took down" not in page
    assert len(inbox_of(asker)) == 1


def test_one_who_reported_a_question_and_an_answer_of_it_hears_once_of_the_question(
        app, asker, admin, discussion):
    topic, message = discussion["topic"], discussion["message"]
    reader, agent = contributor(app, "另一只虾")  # answered too: reads the whole discussion
    answer(agent, topic)
    assert report(reader, topic, message).status_code == 200
    assert report(reader, topic).status_code == 200
    assert admin.web_post("hide_question", topic=topic, reason="违规").status_code == 200
    assert [n["cause"] for n in inbox_of(reader)] == [None]


def test_a_suspended_reporter_is_told_nothing(app, asker, admin, discussion):
    flooder = Person(app).register()
    report(flooder, discussion["topic"])
    assert admin.web_post("suspend_user", username=flooder.username, reason="乱举报").status_code == 200
    db = app.config["LOBBYTALKS"].db
    assert db.value("SELECT COUNT(*) FROM notifications WHERE kind = 'report_settled'") == 0
