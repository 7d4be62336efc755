"""Notification e-mail, sent from a thread of its own after the writing transaction commits.

``services.notifications.notify`` only queues a row in ``mail_outbox`` inside the event's
transaction. This thread wakes after each commit (``Database.after_commit``) and at least
every ``RETRY_POLL`` seconds, reads the due rows, and talks to the SMTP server with no
transaction open and no request waiting. A mail that fails is tried again later with a
growing pause and given up after ``MAX_ATTEMPTS``; a mail whose recipient has since turned
e-mail off, or removed the address, is dropped unsent.

Several processes may each run a mailer on one database (``serve --workers``, two hosts);
each row is sent once because a mailer first claims it (``Q.claim_mail``) and skips what
another claimed. A claim lasts ``CLAIM_SECONDS``: a mailer that died mid-send leaves the
row to be tried again after that.

A mail says what the inbox says -- the question's public title and a name -- in both
languages, with a link when ``LOBBYTALKS_PUBLIC_URL`` is set. Logs name the notification id
and the error's type, never the address or the SMTP credentials.
"""
from __future__ import annotations

import logging
import smtplib
import threading
from email.message import EmailMessage

from . import clock
from .db import Database, DatabaseError, Q, Row
from .i18n import translate
from .services import notifications
from .settings import Settings

log = logging.getLogger("lobbytalks.mail")
BATCH = 20
MAX_ATTEMPTS = 5
FIRST_RETRY = 60          # seconds; doubled after each failure
RETRY_POLL = 30.0         # seconds between looks when no commit wakes the thread
SMTP_TIMEOUT = 15         # seconds for connecting and for each SMTP command
CLAIM_SECONDS = SMTP_TIMEOUT * 4  # longer than one send can take
SECURITY = ("starttls", "ssl", "none")


class Mailer:
    def __init__(self, settings: Settings, db: Database) -> None:
        if settings.smtp_security not in SECURITY:
            raise ValueError(f"LOBBYTALKS_SMTP_SECURITY must be one of {', '.join(SECURITY)}, "
                             f"got {settings.smtp_security!r}")
        self.settings, self.db = settings, db
        self.sent = 0
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lobbytalks-mailer", daemon=True)

    def start(self) -> "Mailer":
        self.db.after_commit.append(self._wake.set)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._wake.set in self.db.after_commit:
            self.db.after_commit.remove(self._wake.set)
        self._stopping.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout=SMTP_TIMEOUT * 2)

    def _run(self) -> None:
        while not self._stopping.is_set():
            self._wake.wait(RETRY_POLL)
            self._wake.clear()
            if self._stopping.is_set():
                return
            try:
                self.drain()
            except DatabaseError:
                log.exception("reading the mail outbox failed; trying again later")
            finally:
                self.db.release_connection()  # PostgreSQL: back to the pool while idle

    def drain(self) -> int:
        """Send every mail due now; returns how many were sent."""
        sent = 0
        for row in self.db.all(Q.list_due_mail, {"now": clock.now(), "limit": BATCH}):
            if not self._claim(row["id"]):
                continue  # another mailer has it
            if not (row["email_notify"] and row["email"]):
                self._forget(row["id"])
                continue
            item = notifications.by_id(self.db.conn, row["notification_id"])
            try:
                self._send(row["email"], item)
            except (OSError, smtplib.SMTPException) as exc:
                self._failed(row, exc)
                continue
            self._forget(row["id"])
            sent += 1
        self.sent += sent
        return sent

    def _claim(self, outbox_id: int) -> bool:
        now = clock.now()
        with self.db.transaction() as conn:
            return conn.execute(Q.claim_mail, {"id": outbox_id, "now": now,
                                               "until": now + CLAIM_SECONDS}).rowcount == 1

    def _forget(self, outbox_id: int) -> None:
        with self.db.transaction() as conn:
            conn.execute(Q.delete_mail, {"id": outbox_id})

    def _failed(self, row: Row, exc: Exception) -> None:
        attempts = row["attempts"] + 1
        if attempts >= MAX_ATTEMPTS:
            log.warning("gave up mailing notification %d after %d attempts (%s)",
                        row["notification_id"], attempts, type(exc).__name__)
            self._forget(row["id"])
            return
        log.info("mailing notification %d failed (%s); trying again later",
                 row["notification_id"], type(exc).__name__)
        with self.db.transaction() as conn:
            conn.execute(Q.postpone_mail, {
                "id": row["id"], "next": clock.now() + FIRST_RETRY * 2 ** (attempts - 1)})

    def compose(self, to: str, item: dict) -> EmailMessage:
        base = self.settings.public_url.rstrip("/")
        lines = []
        for lang in ("zh", "en"):
            lines.append(notifications.describe(item, lang))
            if base:
                lines.append(base + item["link"])
            lines.append("")
        lines.append(translate("zh", "notify.mail_footer"))
        lines.append(translate("en", "notify.mail_footer"))
        message = EmailMessage()
        message["From"] = self.settings.smtp_from
        message["To"] = to
        message["Subject"] = f"[{translate('zh', 'site.name')}] " + \
            notifications.describe(item, "zh")
        message.set_content("\n".join(lines))
        return message

    def _send(self, to: str, item: dict) -> None:
        s = self.settings
        if s.smtp_security == "ssl":
            server: smtplib.SMTP = smtplib.SMTP_SSL(s.smtp_host, s.smtp_port, timeout=SMTP_TIMEOUT)
        else:
            server = smtplib.SMTP(s.smtp_host, s.smtp_port, timeout=SMTP_TIMEOUT)
        with server:
            if s.smtp_security == "starttls":
                server.starttls()
            if s.smtp_username:
                server.login(s.smtp_username, s.smtp_password)
            # to this one address only, whatever the To header might be read as
            server.send_message(self.compose(to, item), to_addrs=[to])
