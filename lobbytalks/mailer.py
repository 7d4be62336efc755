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
row to be tried again after that. A database closed by its owner (an app's end) ends the
thread quietly; any other failure of the database is logged and tried again.

A mail says what the inbox says -- the question's public title and a name -- in both
languages, with a link when ``LOBBYTALKS_PUBLIC_URL`` is set, and goes only to an address
its owner confirmed. The confirmation codes (``services.mail_address``) are sent by the same
thread, first, once each. Logs name the notification id or the user id and the error's
type, never the address, a code or the SMTP credentials.
"""
from __future__ import annotations

import logging
import re
import smtplib
import threading
from email.message import EmailMessage
from functools import partial
from typing import TYPE_CHECKING, Callable
from urllib.parse import quote

from . import clock
from .db import Database, DatabaseError, Q, Row
from .i18n import translate
from .services import mail_address, notifications, password_reset
from .settings import Settings

if TYPE_CHECKING:
    from .crypto import Keyring

log = logging.getLogger("lobbytalks.mail")
BATCH = 20
MAX_ATTEMPTS = 5
FIRST_RETRY = 60          # seconds; doubled after each failure
RETRY_POLL = 30.0         # seconds between looks when no commit wakes the thread
SMTP_TIMEOUT = 15         # seconds for connecting and for each SMTP command
CLAIM_SECONDS = SMTP_TIMEOUT * 4  # longer than one send can take
# One mail failing: the network, the SMTP server, or a message the email library refuses to
# write (ValueError: a header it cannot fold); tried again later, the others still go.
SEND_FAILURES = (OSError, smtplib.SMTPException, ValueError)

# What others wrote (a question's title, an agent's name) reaches a mail client that turns
# every address into a link, in a mail from this site: "please verify at https://x.example"
# in a stranger's title would be a phishing link the site sent. There it reads defanged,
# "https[:]//x[.]example", as security mail does; the pages show it as written.
# A scheme is read from its first letter only (from each letter of "a+a+a+…", the run was
# read to its end), and after any character it cannot hold: "中https://" is defanged too.
_SCHEME = re.compile(r"(?i)(?<![a-z0-9+.-])([a-z][a-z0-9+.-]*):(?=//)")
# a dot between parts of a name whose next part holds a letter, in any script ("例子.com",
# "Евил.com"), not one between digits ("3.14", "v1.2")
_NAME_DOT = re.compile(r"(?<=[\w-])\.(?=[\w-]*[^\W\d_])")
# the dots a browser reads as "." in a host ("evil。com"), between Latin names only: a
# Chinese sentence's full stop stays as it is
_WIDE_DOT = re.compile(r"(?i)(?<=[a-z0-9-])[\u3002\uff0e\uff61](?=[a-z0-9-]*[a-z])")
# an IPv4 address ("203.0.113.9/login"), whose dots are all between digits
_IPV4 = re.compile(r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?!\w|\.\d)")


def unlinkable(text: str) -> str:
    """``text`` with nothing a mail client would make a link of (a scheme, a dotted name,
    an IPv4 address)."""
    text = _NAME_DOT.sub("[.]", _SCHEME.sub(r"\1[:]", text))
    text = _WIDE_DOT.sub(lambda dot: f"[{dot[0]}]", text)
    return _IPV4.sub(lambda address: address[0].replace(".", "[.]"), text)


SECURITY = ("starttls", "ssl", "none")


class Mailer:
    def __init__(self, settings: Settings, db: Database, keyring: "Keyring") -> None:
        if settings.smtp_security not in SECURITY:
            raise ValueError(f"LOBBYTALKS_SMTP_SECURITY must be one of {', '.join(SECURITY)}, "
                             f"got {settings.smtp_security!r}")
        self.settings, self.db, self.keyring = settings, db, keyring  # the key makes codes
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
                if self.db.closed:  # its owner closed the database: nothing left to send
                    log.debug("the database was closed; the mailer stops")
                    return
                log.exception("reading the mail outbox failed; trying again later")
            except Exception:  # a bug must not end the thread, and every mail with it
                log.exception("the mailer failed; trying again later")
            finally:
                if not self.db.closed:
                    self.db.release_connection()  # PostgreSQL: back to the pool while idle

    def drain(self) -> int:
        """Send every mail due now (those asked for first); returns how many were sent."""
        sent = self._send_asked()
        for row in self.db.all(Q.list_due_mail, {"now": clock.now(), "limit": BATCH}):
            if not self._claim(row["id"]):
                continue  # another mailer has it
            if not row["wanted"]:  # turned off, or the address changed, since it was queued
                self._forget(row["id"])
                continue
            item = notifications.by_id(self.db.conn, row["notification_id"])
            try:
                self._send(row["email"], item)
            except SEND_FAILURES as exc:
                self._failed(row, exc)
                continue
            self._forget(row["id"])
            sent += 1
        self.sent += sent
        return sent

    def _send_asked(self) -> int:
        """The mails a person asked for by a mark on their account: confirmation codes and
        password-reset links. One try each, claimed by clearing the mark (so one mailer sends
        it): one that fails to go is asked for again by its reader, never resent on its own."""
        sent = 0
        for due, claim, mail_for, what in (
                (Q.list_due_email_codes, Q.claim_email_code, self._code_mail,
                 "a confirmation code"),
                (Q.list_due_password_resets, Q.claim_password_reset, self._reset_mail,
                 "a password-reset link")):
            for row in self.db.all(due, {"limit": BATCH}):
                with self.db.transaction() as conn:
                    if conn.execute(claim, dict(row)).rowcount != 1:
                        continue  # another mailer has it
                mail = mail_for(row)
                if mail is None:
                    continue
                try:
                    self._deliver(*mail)
                except SEND_FAILURES as exc:
                    log.info("mailing %s to user %d failed (%s)", what, row["id"],
                             type(exc).__name__)
                    continue
                sent += 1
        return sent

    def _code_mail(self, row: Row) -> tuple[EmailMessage, str] | None:
        if not row["email"]:
            return None
        text = mail_address.code(self.keyring, row["id"], row["email"], now=clock.now())
        return self.compose_code(row["email"], text), row["email"]

    def _reset_mail(self, row: Row) -> tuple[EmailMessage, str] | None:
        """The link, signed over the account as it is now; none for an account that lost its
        confirmed address or was suspended since it asked, or a request past its hour."""
        state = self.db.one(Q.get_password_reset_state, {"id": row["id"]})
        if (state is None or not state["email"] or state["suspended_at"] is not None
                or row["due"] < clock.now() - password_reset.VALID_SECONDS):
            return None
        token = password_reset.token(self.keyring, row["id"], row["due"],
                                     state["password_hash"], state["email"])
        return self.compose_reset(state["email"], state["username"], token), state["email"]

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
        item = {**item, **{key: unlinkable(item[key]) for key in ("topicTitle", "actor")
                           if item.get(key)}}
        said = partial(notifications.describe, item)
        return self._message(to, said, said, item["link"], "notify.mail_footer")

    def compose_code(self, to: str, code: str) -> EmailMessage:
        return self._message(to, lambda lang: translate(lang, "mail.code_subject", code=code),
                             lambda lang: translate(lang, "mail.code_text", code=code),
                             "/inbox#mail-settings", "mail.code_footer")

    def compose_reset(self, to: str, username: str, token: str) -> EmailMessage:
        # The token rides in the link's fragment, which browsers never send: it reaches no
        # access log and no Referer; the name beside it is for the browser's password
        # manager. Without the site's public address there is no link.
        text = "mail.reset_text" if self.settings.public_url else "mail.reset_text_no_link"
        return self._message(to, lambda lang: translate(lang, "mail.reset_subject", name=username),
                             lambda lang: translate(lang, text, name=username, code=token),
                             f"/reset-password#code={token}&user={quote(username)}",
                             "mail.reset_footer")

    def _message(self, to: str, subject: Callable[[str], str], said: Callable[[str], str],
                 path: str, footer: str) -> EmailMessage:
        """A mail in both languages (the site keeps no one's language): the subject in both,
        what ``said(lang)`` says, with a link to ``path`` when the site's public address is
        known, then the footer."""
        base = self.settings.public_url.rstrip("/")
        lines = []
        for lang in ("zh", "en"):
            lines.append(said(lang))
            if base:
                lines.append(base + path)
            lines.append("")
        lines += [translate("zh", footer), translate("en", footer)]
        message = EmailMessage()
        message["From"] = self.settings.smtp_from
        message["To"] = to
        site = " · ".join(translate(lang, "site.name") for lang in ("zh", "en"))
        message["Subject"] = f"[{site}] " + " / ".join(dict.fromkeys((subject("zh"),
                                                                      subject("en"))))
        message.set_content("\n".join(lines))
        return message

    def _send(self, to: str, item: dict) -> None:
        self._deliver(self.compose(to, item), to)

    def _deliver(self, message: EmailMessage, to: str) -> None:
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
            server.send_message(message, to_addrs=[to])
