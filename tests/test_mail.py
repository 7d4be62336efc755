"""Notification e-mail: queued in the event's transaction, sent by the mailer thread to a
real SMTP server (aiosmtpd, started here), never while a request waits."""
from __future__ import annotations

import email
import time
from email import policy

import pytest
import requests
from aiosmtpd.controller import Controller
from conftest import LiveServer, contributor, count, free_port, good_result, joined_person, web_session
from qa_helpers import answer

from lobbytalks import create_app

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


def opted_in_question(app):
    asker = joined_person(app)
    r = asker.web_post("notify_settings", email="asker@example.org", emailNotify=True)
    assert r.status_code == 200
    return asker, asker.ask(title=TITLE, privateContext=PRIVATE)


def outbox(db):
    return [tuple(r) for r in db.all("SELECT attempts, next_attempt FROM mail_outbox")]


def test_mail_goes_out_after_commit_and_carries_only_the_notification(settings, smtp, stop_mailers):
    app = mail_app(settings, smtp.port)
    stop_mailers(app)
    asker, topic = opted_in_question(app)
    _, agent = contributor(app, "备份虾")
    message = answer(agent, topic, conclusion=CONCLUSION)
    [mail] = smtp.wait()
    assert smtp.envelopes[0].rcpt_tos == ["asker@example.org"]
    assert mail["To"] == "asker@example.org"
    assert mail["From"] == "LobbyTalks <noreply@localhost>"
    assert mail["Subject"] == f"[虾扯淡] 备份虾 回答了你的问题“{TITLE}”"
    body = mail.get_content()
    assert f"备份虾 answered your question “{TITLE}”" in body
    assert f"https://talk.example.org/q/{topic}?answer={message}#m-{message}" in body
    assert CONCLUSION not in body and PRIVATE not in body
    db = app.config["LOBBYTALKS"].db
    deadline = time.time() + 5
    while db.value("SELECT COUNT(*) FROM mail_outbox") and time.time() < deadline:
        time.sleep(0.05)
    assert db.value("SELECT COUNT(*) FROM mail_outbox") == 0
    assert db.value("SELECT COUNT(*) FROM notifications") == 1



def test_a_mail_goes_to_the_one_address_saved_whatever_its_header_reads_as(
        settings, smtp, stop_mailers):
    """An address saved before lists were refused ("a@x.org, b@x.org" in one field) is
    still one recipient (smtplib reads the first address of it), never each address a mail
    library would find in the To header."""
    app = mail_app(settings, smtp.port)
    stop_mailers(app)
    asker, topic = opted_in_question(app)
    saved = "asker@example.org, other@example.org"
    with app.config["LOBBYTALKS"].db.transaction() as conn:
        conn.execute("UPDATE users SET email = :email WHERE username = :name",
                     {"email": saved, "name": asker.username})
    answer(contributor(app)[1], topic)
    smtp.wait(1)
    assert [e.rcpt_tos for e in smtp.envelopes] == [["asker@example.org"]]

def test_no_mail_for_people_who_did_not_ask(settings, smtp, stop_mailers):
    app = mail_app(settings, smtp.port)
    stop_mailers(app)
    asker = joined_person(app)
    topic = asker.ask(title=TITLE)
    answer(contributor(app)[1], topic)
    opted, other_topic = opted_in_question(app)
    answer(contributor(app)[1], other_topic)
    smtp.wait(1)
    time.sleep(0.5)  # a second mail, if one were wrongly queued, would have gone by now
    assert [e.rcpt_tos for e in smtp.envelopes] == [["asker@example.org"]]


def test_mail_turned_off_before_sending_is_dropped(settings, smtp, db):
    app = mail_app(settings, smtp.port)
    rt = app.config["LOBBYTALKS"]
    rt.mailer.stop()  # hold the mail in the outbox
    asker, topic = opted_in_question(app)
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
    assert "live@example.org" not in log and token not in log
