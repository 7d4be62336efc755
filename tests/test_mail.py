"""Notification e-mail: queued in the event's transaction, sent by the mailer thread to a
real SMTP server (aiosmtpd, started here), never while a request waits."""
from __future__ import annotations

import email
import re
import time
from email import policy

import pytest
import requests
from aiosmtpd.controller import Controller
from conftest import (LiveServer, Person, advance, contributor, count, free_port, good_result,
                      joined_person, settings_for, web_session)
from helpers import assert_web_error
from qa_helpers import answer

from lobbytalks import clock, create_app
from lobbytalks.services import mail_address

TITLE = "怎样备份运行中的 SQLite？"
PRIVATE = "私密：生产库有 40 GB，每天晚上三点跑批量写入任务。"
CONCLUSION = "先用在线备份 API 做一致副本 [S1]，再在低峰时段校验完整性，避免直接复制数据库文件。"


class Collector:
    """An aiosmtpd handler that keeps what it receives."""

    def __init__(self):
        self.envelopes = []

    async def handle_DATA(self, server, session, envelope):
        self.envelopes.append(envelope)
        return "250 OK"

    def wait(self, n=1, timeout=10.0):
        deadline = time.time() + timeout
        while len(self.envelopes) < n and time.time() < deadline:
            time.sleep(0.05)
        assert len(self.envelopes) >= n, f"{len(self.envelopes)} mails after {timeout}s"
        return [email.message_from_bytes(e.content, policy=policy.default)
                for e in self.envelopes]


@pytest.fixture
def smtp():
    collector = Collector()
    controller = Controller(collector, hostname="127.0.0.1", port=free_port())
    controller.start()
    collector.port = controller.port
    yield collector
    controller.stop()


def mail_app(settings, port, **overrides):
    app = create_app(settings.with_overrides(
        smtp_host="127.0.0.1", smtp_port=port, smtp_security="none",
        public_url="https://talk.example.org", **overrides))
    return app


@pytest.fixture
def stop_mailers():
    apps = []
    yield apps.append
    for app in apps:
        app.config["LOBBYTALKS"].mailer.stop()


def confirm_by_mail(app, person, smtp, address="asker@example.org", by_hand=False):
    """Save ``address``, read the code from the mail the server sends it, enter the code."""
    r = person.web_post("notify_settings", email=address, emailNotify=True)
    assert r.status_code == 200 and r.get_json()["codeSent"] is True, r.get_json()
    if by_hand:
        assert app.config["LOBBYTALKS"].mailer.drain() == 1
    [mail] = smtp.wait(1)
    code = re.search(r"\b(\d{8})\b", mail.get_content()).group(1)
    smtp.envelopes.clear()
    r = person.web_post("confirm_email", code=code, currentPassword=person.password)
    assert r.status_code == 200 and r.get_json()["emailConfirmed"] is True, r.get_json()
    return mail, code


def opted_in_question(app, smtp=None, by_hand=False):
    """An asker mailed at a confirmed address (through the code mail when ``smtp`` is
    given) and their question."""
    asker = joined_person(app)
    if smtp is None:
        asker.mail_to("asker@example.org")
    else:
        confirm_by_mail(app, asker, smtp, by_hand=by_hand)
    return asker, asker.ask(title=TITLE, privateContext=PRIVATE)


def outbox(db):
    return [tuple(r) for r in db.all("SELECT attempts, next_attempt FROM mail_outbox")]


def test_mail_goes_out_after_commit_and_carries_only_the_notification(settings, smtp, stop_mailers):
    app = mail_app(settings, smtp.port)
    stop_mailers(app)
    asker, topic = opted_in_question(app, smtp)
    owner, agent = contributor(app, "备份虾")
    message = answer(agent, topic, conclusion=CONCLUSION)
    [mail] = smtp.wait()
    assert smtp.envelopes[0].rcpt_tos == ["asker@example.org"]
    assert mail["To"] == "asker@example.org"
    assert mail["From"] == "LobbyTalks <noreply@localhost>"
    # the agent with the person it belongs to: its name alone could be anyone's
    # in both languages: the site keeps no one's language (an English reader's mail client
    # showed only Chinese in the list of mails)
    assert mail["Subject"] == (f"[虾扯淡 · LobbyTalks] {owner.username} 的智能体 备份虾 回答了你的问题“{TITLE}”"
                               f" / {owner.username}'s agent 备份虾 answered your question “{TITLE}”")
    body = mail.get_content()
    assert f"{owner.username}'s agent 备份虾 answered your question “{TITLE}”" in body
    assert f"https://talk.example.org/q/{topic}?answer={message}#m-{message}" in body
    assert CONCLUSION not in body and PRIVATE not in body
    db = app.config["LOBBYTALKS"].db
    deadline = time.time() + 5
    while db.value("SELECT COUNT(*) FROM mail_outbox") and time.time() < deadline:
        time.sleep(0.05)
    assert db.value("SELECT COUNT(*) FROM mail_outbox") == 0
    assert db.value("SELECT COUNT(*) FROM notifications") == 1



def test_a_burst_of_answers_is_one_mail_until_read_or_an_hour_later(
        settings, smtp, stop_mailers, clock_file):
    """One member's agents answering again and again (200 answers in seconds) must not be
    200 e-mails: further answers to the same question stay in the inbox while the first is
    unread, for an hour; reading it, or the hour passing, lets the next one mail again."""
    app = mail_app(settings, smtp.port)
    stop_mailers(app)
    asker, topic = opted_in_question(app, smtp)
    for n in range(3):
        answer(contributor(app, f"快答虾{n}")[1], topic)
    smtp.wait(1)
    db = app.config["LOBBYTALKS"].db
    assert count(db, "notifications") == 3
    time.sleep(0.5)  # a second mail, if one were wrongly queued, would have gone by now
    assert len(smtp.envelopes) == 1 and count(db, "mail_outbox") == 0
    assert "within the hour" in smtp.wait(1)[0].get_content()
    # another question is another mail
    other = asker.ask(title="另一个问题：WAL 文件会无限增长吗？")
    answer(contributor(app, "另一只虾")[1], other)
    smtp.wait(2)
    # read: the next answer mails again
    assert asker.web_post("notifications_read").status_code == 200
    answer(contributor(app, "读后虾")[1], topic)
    mails = smtp.wait(3)
    assert "读后虾" in mails[2]["Subject"]
    # unread, but an hour later: mails again
    answer(contributor(app, "同时虾")[1], topic)
    advance(clock_file, 3600)
    answer(contributor(app, "一小时后虾")[1], topic)
    mails = smtp.wait(4)
    assert "一小时后虾" in mails[3]["Subject"]
    time.sleep(0.3)
    assert len(smtp.envelopes) == 4


def test_a_mail_goes_to_the_one_address_saved_whatever_its_header_reads_as(
        settings, smtp, stop_mailers):
    """An address saved before lists were refused ("a@x.org, b@x.org" in one field) is
    still one recipient (smtplib reads the first address of it), never each address a mail
    library would find in the To header."""
    app = mail_app(settings, smtp.port)
    stop_mailers(app)
    asker, topic = opted_in_question(app, smtp)
    saved = "asker@example.org, other@example.org"
    with app.config["LOBBYTALKS"].db.transaction() as conn:
        conn.execute("UPDATE users SET email = :email, email_confirmed = :email "
                     "WHERE username = :name", {"email": saved, "name": asker.username})
    answer(contributor(app)[1], topic)
    smtp.wait(1)
    assert [e.rcpt_tos for e in smtp.envelopes] == [["asker@example.org"]]

def test_no_mail_for_people_who_did_not_ask(settings, smtp, stop_mailers):
    app = mail_app(settings, smtp.port)
    stop_mailers(app)
    asker = joined_person(app)
    topic = asker.ask(title=TITLE)
    answer(contributor(app)[1], topic)
    opted, other_topic = opted_in_question(app, smtp)
    answer(contributor(app)[1], other_topic)
    smtp.wait(1)
    time.sleep(0.5)  # a second mail, if one were wrongly queued, would have gone by now
    assert [e.rcpt_tos for e in smtp.envelopes] == [["asker@example.org"]]


def test_mail_turned_off_before_sending_is_dropped(settings, smtp, db):
    app = mail_app(settings, smtp.port)
    rt = app.config["LOBBYTALKS"]
    rt.mailer.stop()  # hold the mail in the outbox
    asker, topic = opted_in_question(app, smtp, by_hand=True)
    answer(contributor(app)[1], topic)
    assert count(db, "mail_outbox") == 1
    asker.web_post("notify_settings", email="asker@example.org", emailNotify=False)
    assert rt.mailer.drain() == 0
    assert count(db, "mail_outbox") == 0 and smtp.envelopes == []


def test_an_unreachable_server_never_blocks_a_request_and_mail_waits(settings, db, stop_mailers):
    app = mail_app(settings, free_port())  # nothing listens there
    stop_mailers(app)
    asker, topic = opted_in_question(app)
    _, agent = contributor(app)
    started = time.monotonic()
    answer(agent, topic)
    assert time.monotonic() - started < 2
    deadline = time.time() + 10
    while not (outbox(db) and outbox(db)[0][0] == 1) and time.time() < deadline:
        time.sleep(0.05)
    [(attempts, next_attempt)] = outbox(db)
    assert attempts == 1 and next_attempt > time.time() + 30
    assert count(db, "notifications") == 1


def test_a_mail_the_email_library_refuses_is_retried_and_the_mailer_lives_on(
        settings, smtp, db, caplog, monkeypatch):
    """A From header with a line break made every mail raise ValueError: the mailer's
    thread died at the first, and no mail went out until a restart."""
    app = mail_app(settings, smtp.port)
    mailer = app.config["LOBBYTALKS"].mailer
    thread = mailer._thread
    refuse = [True]
    real_compose = mailer.compose

    def compose(to, item):
        if refuse[0]:
            raise ValueError("Header values may not contain linefeed or carriage return")
        return real_compose(to, item)
    monkeypatch.setattr(mailer, "compose", compose)
    with caplog.at_level("INFO", logger="lobbytalks.mail"):
        _, topic = opted_in_question(app, smtp)
        codes = len(smtp.envelopes)  # the address's confirmation went before
        answer(contributor(app)[1], topic)
        deadline = time.time() + 10
        while not (outbox(db) and outbox(db)[0][0] == 1) and time.time() < deadline:
            time.sleep(0.05)
    assert outbox(db)[0][0] == 1 and "failed (ValueError)" in caplog.text
    assert thread.is_alive() and len(smtp.envelopes) == codes
    monkeypatch.setattr(mailer, "drain", lambda: 1 / 0)  # and a failure nobody foresaw
    with caplog.at_level("ERROR", logger="lobbytalks.mail"):
        mailer._wake.set()
        deadline = time.time() + 10
        while "the mailer failed" not in caplog.text and time.time() < deadline:
            time.sleep(0.05)
    assert "the mailer failed; trying again later" in caplog.text and thread.is_alive()
    mailer.stop()


def test_mail_logs_in_when_a_login_is_set_and_a_wrong_one_is_retried(settings, db, caplog):
    from aiosmtpd.smtp import AuthResult, LoginPassword
    collector, tried = Collector(), []

    def authenticator(server, session, envelope, mechanism, data):
        tried.append(mechanism)
        good = isinstance(data, LoginPassword) and (data.login, data.password) == (
            b"talk", b"s3cret-smtp-pass")
        return AuthResult(success=good)
    controller = Controller(collector, hostname="127.0.0.1", port=free_port(),
                            authenticator=authenticator, auth_require_tls=False)
    controller.start()
    try:
        for password, delivered in (("wrong-pass", 0), ("s3cret-smtp-pass", 1)):
            app = mail_app(settings, controller.port, smtp_username="talk",
                           smtp_password=password)
            mailer = app.config["LOBBYTALKS"].mailer
            mailer.stop()  # driven by hand below
            if not delivered:
                _, topic = opted_in_question(app)
                answer(contributor(app)[1], topic)
                with caplog.at_level("INFO", logger="lobbytalks.mail"):
                    assert mailer.drain() == 0
                assert outbox(db)[0][0] == 1  # postponed, not lost
                with db.transaction() as conn:
                    conn.execute("UPDATE mail_outbox SET next_attempt = 0")
            else:
                assert mailer.drain() == 1
        assert len(collector.envelopes) == 1 and tried
        assert "wrong-pass" not in caplog.text and "asker@example.org" not in caplog.text
        assert "mailing notification 1 failed (SMTP" in caplog.text
    finally:
        controller.stop()


def test_an_unknown_security_setting_stops_the_start(settings):
    with pytest.raises(ValueError, match="LOBBYTALKS_SMTP_SECURITY"):
        create_app(settings.with_overrides(smtp_host="127.0.0.1", smtp_security="tls"))


def test_a_served_process_mails_from_its_own_thread(tmp_path, smtp):
    server = LiveServer(tmp_path / "live", env={
        "LOBBYTALKS_SMTP_HOST": "127.0.0.1", "LOBBYTALKS_SMTP_PORT": str(smtp.port),
        "LOBBYTALKS_SMTP_SECURITY": "none", "LOBBYTALKS_ACCESS_LOG": "true"})
    try:
        base = server.url
        asker = web_session(server)
        for session in (asker,):
            assert session.post(base + "/api/communities",
                                json={"action": "join", "community": "lobby"}).status_code == 200
        assert asker.post(base + "/api/community", json={
            "action": "notify_settings", "email": "live@example.org",
            "emailNotify": True}).status_code == 200
        [code_mail] = smtp.wait()  # the address is confirmed with the code mailed to it
        code = re.search(r"\b(\d{8})\b", code_mail.get_content()).group(1)
        smtp.envelopes.clear()
        assert asker.post(base + "/api/community", json={
            "action": "confirm_email", "code": code,
            "currentPassword": "correct horse 1"}).json()["emailConfirmed"] is True
        topic = asker.post(base + "/api/community", json={
            "action": "topic", "title": TITLE, "privateContext": PRIVATE}).json()["id"]
        owner = web_session(server)
        owner.post(base + "/api/communities", json={"action": "join", "community": "lobby"})
        token = owner.post(base + "/api/external/manage", json={
            "action": "register", "name": "远程虾", "perspective": "查证",
            "client": "codex"}).json()["token"]
        agent = requests.Session()
        agent.headers["Authorization"] = f"Bearer {token}"
        task = agent.post(base + "/api/external", json={
            "action": "claim_task", "topic": topic,
            "requestId": "5b0a6c1e-0d7e-4f43-9a51-7f0c1f0f3a11"}).json()["task"]["id"]
        started = time.monotonic()
        r = agent.post(base + "/api/external", json={
            "action": "submit_result", "taskId": task, **good_result(conclusion=CONCLUSION)})
        assert r.status_code == 200 and time.monotonic() - started < 2
        [mail] = smtp.wait()
        assert mail["To"] == "live@example.org" and TITLE in mail["Subject"]
        assert CONCLUSION not in mail.get_content() and PRIVATE not in mail.get_content()
    finally:
        log = server.stop()
    assert "live@example.org" not in log and token not in log and code not in log


# --- an address is confirmed before any notification is mailed to it ---------------------

def test_an_unconfirmed_address_gets_its_code_and_nothing_else(settings, smtp, stop_mailers):
    """Otherwise anyone could have the server mail someone else's box, a question title of
    their choosing in the subject, as often as they can make a task fail."""
    app = mail_app(settings, smtp.port)
    stop_mailers(app)
    asker = joined_person(app)
    r = asker.web_post("notify_settings", email="victim@example.org", emailNotify=True)
    assert r.get_json()["emailConfirmed"] is False and r.get_json()["codeSent"] is True
    [mail] = smtp.wait(1)
    assert smtp.envelopes[0].rcpt_tos == ["victim@example.org"]
    code = re.search(r"\b(\d{8})\b", mail.get_content()).group(1)
    assert mail["Subject"] == f"[虾扯淡 · LobbyTalks] 邮箱确认码 {code} / Confirmation code {code}"
    body = mail.get_content()
    assert f"Your confirmation code is {code}." in body
    assert "https://talk.example.org/inbox#mail-settings" in body
    assert "ignore this mail: without the code, this site sends it nothing more" in body
    topic = asker.ask(title="Buy cheap pills at pharma.example.com now")
    _, agent = contributor(app)
    answer(agent, topic)
    assert count(app.config["LOBBYTALKS"].db, "mail_outbox") == 0  # nothing queued for it
    time.sleep(0.5)
    assert len(smtp.envelopes) == 1
    page = asker.http.get("/inbox?lang=en").get_data(as_text=True)
    assert "This address is not confirmed yet" in page and 'data-action="confirm_email"' in page
    smtp.envelopes.clear()
    assert asker.web_post("confirm_email", code=f" {code[:4]} {code[4:]} ",
                          currentPassword=asker.password).status_code == 200
    assert "Confirmed" in asker.http.get("/inbox?lang=en").get_data(as_text=True)
    answer(contributor(app)[1], topic)
    [mail] = smtp.wait(1)
    assert "Buy cheap pills" in mail["Subject"]


def test_a_wrong_or_old_code_confirms_nothing_and_guessing_is_bounded(settings, smtp, clock_file):
    app = mail_app(settings, smtp.port, rate_login_pair="6/hour")
    asker = joined_person(app)
    mail, code = confirm_by_mail(app, asker, smtp, "first@example.org")
    assert "Confirmed" in asker.http.get("/inbox?lang=en").get_data(as_text=True)
    # a new address needs its own code; the old one's confirms nothing
    asker.web_post("notify_settings", email="second@example.org", emailNotify=True)
    [mail] = smtp.wait(1)
    second = re.search(r"\b(\d{8})\b", mail.get_content()).group(1)
    db = app.config["LOBBYTALKS"].db
    confirmed = "SELECT email_confirmed FROM users WHERE username = :name"
    for wrong in (code, "00000000", "abc", "１２３４５６７８", "é€"):  # never a 5xx
        assert_web_error(asker.web_post("confirm_email", code=wrong, currentPassword=asker.password), 400)
    assert db.value(confirmed, {"name": asker.username}) == "first@example.org"
    # a code lasts one to two days
    advance(clock_file, 2 * 86400)
    assert_web_error(asker.web_post("confirm_email", code=second, currentPassword=asker.password), 400)
    # six wrong codes: the seventh try is refused before it is checked, even a right one
    rt = app.config["LOBBYTALKS"]
    fresh = mail_address.code(rt.keyring, asker.web_get(action="me").get_json()["user"]["id"],
                              "second@example.org", now=clock.now())
    assert_web_error(asker.web_post("confirm_email", code=fresh, currentPassword=asker.password), 429)
    assert db.value(confirmed, {"name": asker.username}) == "first@example.org"
    # going back to the confirmed address needs no code
    smtp.envelopes.clear()
    r = asker.web_post("notify_settings", email="first@example.org", emailNotify=True)
    assert r.get_json()["emailConfirmed"] is True and r.get_json()["codeSent"] is False
    time.sleep(0.3)
    assert smtp.envelopes == []


def test_codes_are_mailed_a_few_times_a_day_at_most(settings, smtp, stop_mailers):
    app = mail_app(settings, smtp.port, rate_email_code="3/day")
    stop_mailers(app)
    asker = joined_person(app)
    assert_web_error(asker.web_post("email_code"), 409)  # no address yet
    asker.web_post("notify_settings", email="a@example.org", emailNotify=False)
    smtp.wait(1)  # (asked again while one still waits to go, the two are one mail)
    assert asker.web_post("email_code").get_json() == {"ok": True, "codeSent": True}
    smtp.wait(2)
    assert asker.web_post("notify_settings", email="b@example.org",
                          emailNotify=False).get_json()["codeSent"] is True  # the third
    assert_web_error(asker.web_post("notify_settings", email="c@example.org",
                                    emailNotify=False), 429)
    assert_web_error(asker.web_post("email_code"), 429)
    smtp.wait(3)
    time.sleep(0.3)
    assert [e.rcpt_tos for e in smtp.envelopes] == [["a@example.org"]] * 2 + [["b@example.org"]]
    assert Person(app).web_post("email_code").status_code == 401


def test_a_code_asked_for_with_nothing_to_confirm_spends_no_budget(settings, smtp, stop_mailers):
    """The budget was spent before the 409 said there was nothing to send: refused asks
    used up the day's codes of the person (and of an address confirmed already)."""
    app = mail_app(settings, smtp.port, rate_email_code="2/day")
    stop_mailers(app)
    asker = joined_person(app)
    for _ in range(3):
        assert_web_error(asker.web_post("email_code"), 409, "invalid_request")
    r = asker.web_post("notify_settings", email="a@example.org", emailNotify=False)
    assert r.status_code == 200 and r.get_json()["codeSent"] is True
    smtp.wait(1)
    assert asker.web_post("email_code").get_json() == {"ok": True, "codeSent": True}
    smtp.wait(2)


def test_one_address_gets_a_few_codes_however_many_accounts_name_it(settings, smtp, stop_mailers):
    """Each new account had its own code budget, so accounts naming one stranger's address
    mailed it RATE_EMAIL_CODE codes each."""
    app = mail_app(settings, smtp.port, rate_email_code="2/day")
    stop_mailers(app)
    first, second, third = (joined_person(app) for _ in range(3))
    for person in (first, second):
        r = person.web_post("notify_settings", email="Victim@example.org", emailNotify=False)
        assert r.status_code == 200 and r.get_json()["codeSent"] is True
    # the third account's address is saved all the same (a stranger cannot keep its owner
    # from saving it), only its code waits: asked for again, it is refused for now
    r = third.web_post("notify_settings", email="victim@EXAMPLE.org", emailNotify=False)
    assert r.status_code == 200 and r.get_json()["codeSent"] is False, r.get_json()
    assert r.get_json()["email"] == "victim@EXAMPLE.org"
    assert_web_error(first.web_post("email_code"), 429)
    assert third.web_post("notify_settings", email="own@example.org",
                          emailNotify=False).get_json()["codeSent"] is True  # its own budget
    smtp.wait(3)
    time.sleep(0.3)
    assert sorted(e.rcpt_tos[0].lower() for e in smtp.envelopes) == [
        "own@example.org", "victim@example.org", "victim@example.org"]


def test_a_code_asked_for_one_address_never_goes_to_the_next_one_saved(settings, smtp):
    """The code due stayed due when another address was saved without one (its budget
    spent): the mailer reads the address when it sends, so saving one's own address and
    then a stranger's mailed the stranger past the address's budget, the answer saying
    codeSent false."""
    app = mail_app(settings, smtp.port, rate_email_code="3/day")
    mailer = app.config["LOBBYTALKS"].mailer
    mailer.stop()  # sent by hand below, between the saves
    for person in (joined_person(app) for _ in range(3)):
        assert person.web_post("notify_settings", email="victim@example.org",
                               emailNotify=False).get_json()["codeSent"] is True
    assert mailer.drain() == 3
    attacker = joined_person(app)
    assert attacker.web_post("notify_settings", email="own@example.org",
                             emailNotify=False).get_json()["codeSent"] is True
    r = attacker.web_post("notify_settings", email="victim@example.org", emailNotify=False)
    assert r.get_json()["codeSent"] is False
    assert mailer.drain() == 0  # the code for own@ is not the victim's, nor own@'s any more
    # back to their own address: its code is asked for afresh
    assert attacker.web_post("notify_settings", email="own@example.org",
                             emailNotify=False).get_json()["codeSent"] is True
    assert mailer.drain() == 1
    smtp.wait(4)
    time.sleep(0.3)
    assert [e.rcpt_tos for e in smtp.envelopes] == [["victim@example.org"]] * 3 + [
        ["own@example.org"]]


def test_a_code_asked_again_is_queued_only_for_the_address_whose_budget_it_spent(app):
    """email_code spent the budget of the address it read, then queued the code in another
    transaction: an address saved in between (a stranger's) would have been mailed."""
    from lobbytalks.services import mail_address
    person = joined_person(app)
    person.web_post("notify_settings", email="own@example.org", emailNotify=False)
    db = app.config["LOBBYTALKS"].db
    user_id = person.web_get(action="me").get_json()["user"]["id"]
    with db.transaction() as conn:  # (its first code sent)
        conn.execute("UPDATE users SET email_code_due = 0 WHERE id = :id", {"id": user_id})
    assert mail_address.send_code_again(db, user_id, "victim@example.org")["codeSent"] is False
    assert db.value("SELECT email_code_due FROM users WHERE id = :id", {"id": user_id}) == 0
    assert mail_address.send_code_again(db, user_id, "own@example.org")["codeSent"] is True
    assert db.value("SELECT email_code_due FROM users WHERE id = :id", {"id": user_id}) == 1


def test_nobody_is_mailed_more_than_a_few_times_an_hour(settings, smtp, stop_mailers,
                                                        clock_file, monkeypatch):
    """One mail per question still let a stranger mail someone once per question they
    asked (a share request on each); past MAILS_PER_HOUR in an hour the rest wait in the
    inbox."""
    from lobbytalks.services import notifications
    monkeypatch.setattr(notifications, "MAILS_PER_HOUR", 3)
    app = mail_app(settings, smtp.port, rate_topic="100/day")
    stop_mailers(app)
    asker = joined_person(app)
    asker.mail_to("asker@example.org")
    smtp.wait(1)  # the code mail
    smtp.envelopes.clear()
    for n in range(5):
        answer(contributor(app)[1], asker.ask(f"第 {n} 个问题：备份要多久做一次？"))
    smtp.wait(3)
    time.sleep(0.5)
    db = app.config["LOBBYTALKS"].db
    assert len(smtp.envelopes) == 3 and count(db, "notifications") == 5
    advance(clock_file, 3601)
    answer(contributor(app)[1], asker.ask("一小时后的问题：WAL 要不要定期检查？"))
    smtp.wait(4)


def test_a_strangers_address_in_a_title_reaches_mail_defanged(settings, smtp, stop_mailers):
    """A title reading "verify at https://…" mailed from this site to someone else (a share
    request here) would be a phishing link the site sent; mail clients link every address."""
    app = mail_app(settings, smtp.port)
    stop_mailers(app)
    stranger = joined_person(app)
    topic = stranger.ask(title="账号异常，请访问 https://lobbytalks-verify.example/login 重新验证")
    author, agent = contributor(app, "答题虾")
    confirm_by_mail(app, author, smtp, address="author@example.org")
    message = answer(agent, topic)
    assert stranger.web_post("share_request", message=message).status_code == 200
    [mail] = smtp.wait()
    body = mail.get_content()
    for text in (mail["Subject"], body):
        assert "https[:]//lobbytalks-verify[.]example/login" in text
        assert "https://lobbytalks-verify" not in text
    assert f"https://talk.example.org/q/{topic}?answer={message}#m-{message}" in body  # ours


@pytest.mark.parametrize("text, mailed", [
    ("请访问 例子.com/login", "请访问 例子[.]com/login"),
    ("Евил.com и evil.com", "Евил[.]com и evil[.]com"),
    ("版本 3.14 与 v1.2", "版本 3.14 与 v1.2"),          # numbers are no names
    ("见 203.0.113.9/login 或 10.0.0.1", "见 203[.]0[.]113[.]9/login 或 10[.]0[.]0[.]1"),
    ("版本 1.2.3 与 1.2.3.4.5", "版本 1.2.3 与 1.2.3.4.5"),  # no address: three or five parts
    ("evil。com 与 evil．com/x", "evil[。]com 与 evil[．]com/x"),  # dots a browser reads as "."
    ("我同意。Next 好。下一个", "我同意。Next 好。下一个"),  # a sentence's full stop is no dot
    ("ftp://a.example", "ftp[:]//a[.]example"),
    ("见https://a.example", "见https[:]//a[.]example"),      # after a Chinese character too
    ("x_https://a.example", "x_https[:]//a[.]example"),
    ("git+ssh://a.example", "git+ssh[:]//a[.]example"),      # the whole scheme
])
def test_names_in_any_script_are_defanged(text, mailed):
    from lobbytalks.mailer import unlinkable
    assert unlinkable(text) == mailed


def test_a_text_of_scheme_letters_is_defanged_at_once():
    """From each letter of "a+a+…" the run was read to its end (quadratic); the bound
    only catches that."""
    from lobbytalks.mailer import unlinkable
    started = time.monotonic()
    assert unlinkable("a+" * 30_000 + "://x") == "a+" * 30_000 + "[:]//x"
    assert unlinkable("a+" * 30_000) == "a+" * 30_000
    assert time.monotonic() - started < 2


@pytest.mark.once  # the target is always the session's PostgreSQL, whatever the suite's backend
def test_a_mailer_stops_quietly_once_its_database_is_closed_and_logs_a_live_ones_failure(
        pg_server, tmp_path, smtp, caplog):
    """A pool closed by its owner (an app's end) ends the mailer's thread without the
    traceback an outage of an open database deserves."""
    import psycopg
    import pgtest
    name = f"mail_{tmp_path.name[-12:].lower()}_{free_port()}"
    with psycopg.connect(pg_server.url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    app = mail_app(settings_for(tmp_path / "data", database_url=pgtest.with_database(
        pg_server.url, name)), smtp.port)
    rt = app.config["LOBBYTALKS"]
    thread = rt.mailer._thread
    try:
        with caplog.at_level("DEBUG", logger="lobbytalks.mail"):
            # An outage: its connections ended and no new one let in (connections ended
            # alone are replaced at the next checkout, with nothing to log).
            with psycopg.connect(pg_server.url, autocommit=True) as admin:
                admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
                admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                              "WHERE datname = %s", (name,))
            rt.mailer._wake.set()
            deadline = time.time() + 30  # the pool's own wait for a connection comes first
            while "outbox failed" not in caplog.text and time.time() < deadline:
                time.sleep(0.05)
            assert "reading the mail outbox failed" in caplog.text and thread.is_alive()
            caplog.clear()
            rt.db.close()
            rt.mailer._wake.set()
            thread.join(timeout=10)
        assert not thread.is_alive()
        assert [r for r in caplog.records if r.levelno >= 30] == [], caplog.text
        assert "closed" in caplog.text  # it said why, at debug level
    finally:
        rt.mailer.stop()
        with psycopg.connect(pg_server.url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
