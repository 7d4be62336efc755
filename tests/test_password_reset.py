"""A forgotten password, reset with a link mailed to the account's confirmed address: the
mail goes out through a real SMTP server (aiosmtpd), the reset through /api/community."""
from __future__ import annotations

import re
import threading
import time

import pytest
from conftest import Person, advance, free_port, joined_person
from helpers import assert_web_error
from test_mail import confirm_by_mail, mail_app, smtp, stop_mailers  # noqa: F401 (fixtures)

from lobbytalks import clock, create_app
from lobbytalks.services import accounts, moderation, password_reset

NEW_PASSWORD = "a brand new secret 7"
TOKEN = re.compile(r"reset-password#code=(\d+-\d+-[a-z2-7]{24})&user=")


def anonymous(app) -> Person:
    return Person(app)


def forgotten(app, smtp, address="owner@example.org", by_hand=False) -> Person:
    """A person with a confirmed address (the confirmation mail already read; ``by_hand``:
    sent by the test, the app's mailer stopped)."""
    owner = joined_person(app)
    confirm_by_mail(app, owner, smtp, address, by_hand=by_hand)
    return owner


def mailed_token(smtp) -> tuple[str, object]:
    [mail] = smtp.wait(1)
    smtp.envelopes.clear()
    return TOKEN.search(mail.get_content()).group(1), mail


def ask_reset(app, account: str):
    r = anonymous(app).web_post("forgot_password", account=account)
    assert r.status_code == 200 and r.get_json() == {"ok": True}, r.get_json()
    return r


def logged_in(person: Person) -> bool:
    return person.web_get(action="me").get_json()["user"] is not None


def test_the_mailed_link_sets_a_new_password_logs_in_and_ends_every_other_login(
        settings, smtp, stop_mailers):
    app = mail_app(settings, smtp.port)
    stop_mailers(app)
    owner = forgotten(app, smtp)
    assert logged_in(owner)
    ask_reset(app, owner.username.upper())  # names are matched as logins are
    token, mail = mailed_token(smtp)
    assert smtp.envelopes == [] and mail["To"] == "owner@example.org"
    assert mail["Subject"] == (f"[虾扯淡 · LobbyTalks] 重置账号 {owner.username} 的密码"
                               f" / Reset the password of {owner.username}")
    body = mail.get_content()
    # the name beside the code is for the browser's password manager
    assert f"https://talk.example.org/reset-password#code={token}&user={owner.username}\n" in body
    assert "ignore this mail" in body
    password_hash = accounts.password_hash_of(app.config["LOBBYTALKS"].db, owner.username)
    assert password_hash not in body and password_hash.split("$")[-1] not in body

    stranger_browser = anonymous(app)
    # pasted from a mail client: spaces and capitals around it are forgiven
    r = stranger_browser.web_post("reset_password", code=f"  {token.upper()} ",
                                  newPassword=NEW_PASSWORD)
    assert r.status_code == 200 and r.get_json() == {"ok": True}, r.get_json()
    me = stranger_browser.web_get(action="me").get_json()["user"]
    assert me["username"] == owner.username
    assert not logged_in(owner)  # the session from before ends
    assert_web_error(anonymous(app).web_post("login", username=owner.username,
                                             password=owner.password), 401)
    assert anonymous(app).web_post("login", username=owner.username,
                                   password=NEW_PASSWORD).status_code == 200
    # the link works once
    body = assert_web_error(anonymous(app).web_post("reset_password", code=token,
                                                    newPassword="another new one 8"), 400,
                            "invalid_request")
    assert body["error"].startswith("code: ")


def test_an_account_is_found_by_its_confirmed_address_in_any_case(settings, smtp, stop_mailers):
    app = mail_app(settings, smtp.port)
    stop_mailers(app)
    owner = forgotten(app, smtp, "Owner.Name@Example.org")
    ask_reset(app, "  owner.name@EXAMPLE.ORG ")
    token, mail = mailed_token(smtp)
    assert mail["To"] == "Owner.Name@Example.org"
    r = anonymous(app).web_post("reset_password", code=token, newPassword=NEW_PASSWORD)
    assert r.status_code == 200, r.get_json()
    assert anonymous(app).web_post("login", username=owner.username,
                                   password=NEW_PASSWORD).status_code == 200


def test_every_request_is_answered_alike_and_only_a_confirmed_address_is_mailed(
        settings, smtp, stop_mailers):
    app = mail_app(settings, smtp.port)
    rt = app.config["LOBBYTALKS"]
    stop_mailers(app)
    no_address = joined_person(app)
    unconfirmed = joined_person(app)
    assert unconfirmed.web_post("notify_settings", email="someone-else@example.org",
                                emailNotify=True).status_code == 200
    smtp.wait(1)  # its confirmation code, never confirmed
    smtp.envelopes.clear()
    suspended = forgotten(app, smtp, "suspended@example.org")
    admin = Person(app).register()
    accounts.set_admin(rt.db, admin.username, True)
    admin_id = admin.web_get(action="me").get_json()["user"]["id"]
    moderation.suspend(rt.db, admin_id, suspended.username, "spam", now=clock.now())
    answers = {ask_reset(app, account).get_data()
               for account in ("nobody_here", no_address.username, unconfirmed.username,
                               "someone-else@example.org", suspended.username,
                               "suspended@example.org", "nobody@example.org")}
    assert len(answers) == 1
    assert rt.mailer.drain() == 0
    time.sleep(0.3)
    assert smtp.envelopes == []


def test_a_link_ends_with_its_hour_a_new_password_or_another_address(
        settings, smtp, stop_mailers, clock_file):
    app = mail_app(settings, smtp.port)
    stop_mailers(app)
    owner = forgotten(app, smtp)
    ask_reset(app, owner.username)
    late, _ = mailed_token(smtp)
    advance(clock_file, password_reset.VALID_SECONDS + 1)
    assert_web_error(anonymous(app).web_post("reset_password", code=late,
                                             newPassword=NEW_PASSWORD), 400, "invalid_request")

    ask_reset(app, owner.username)
    changed, _ = mailed_token(smtp)
    assert owner.web_post("change_password", currentPassword=owner.password,
                          newPassword="changed meanwhile 1").status_code == 200
    assert_web_error(anonymous(app).web_post("reset_password", code=changed,
                                             newPassword=NEW_PASSWORD), 400, "invalid_request")

    ask_reset(app, owner.username)
    moved, _ = mailed_token(smtp)
    owner.password = "changed meanwhile 1"
    confirm_by_mail(app, owner, smtp, "elsewhere@example.org")  # another address confirmed
    assert_web_error(anonymous(app).web_post("reset_password", code=moved,
                                             newPassword=NEW_PASSWORD), 400, "invalid_request")
    assert anonymous(app).web_post("login", username=owner.username,
                                   password="changed meanwhile 1").status_code == 200


def test_a_browser_left_logged_in_cannot_point_the_reset_at_another_address(
        settings, smtp, stop_mailers):
    """Confirming an address takes the password, and until a new one is confirmed the reset
    mail goes to the one confirmed before: a session alone is no way to the account."""
    app = mail_app(settings, smtp.port)
    stop_mailers(app)
    owner = forgotten(app, smtp)
    intruder = owner  # the owner's browser, in someone else's hands
    assert intruder.web_post("notify_settings", email="intruder@example.org",
                             emailNotify=True).status_code == 200
    code = re.search(r"\b(\d{8})\b", smtp.wait(1)[0].get_content()).group(1)
    smtp.envelopes.clear()
    assert_web_error(intruder.web_post("confirm_email", code=code), 400, "invalid_request")
    r = intruder.web_post("confirm_email", code=code, currentPassword="a guess at it 1")
    assert assert_web_error(r, 403, "forbidden")["error"].startswith("currentPassword: ")
    ask_reset(app, "intruder@example.org")
    ask_reset(app, owner.username)
    [mail] = smtp.wait(1)
    assert mail["To"] == "owner@example.org"
    time.sleep(0.3)
    assert len(smtp.envelopes) == 1
    # an owner who removes their address is mailed nothing
    smtp.envelopes.clear()
    assert owner.web_post("notify_settings", email="", emailNotify=False).status_code == 200
    ask_reset(app, owner.username)
    ask_reset(app, "owner@example.org")
    time.sleep(0.5)
    assert smtp.envelopes == []


def test_a_made_up_or_altered_code_changes_nothing(settings, smtp, stop_mailers):
    app = mail_app(settings, smtp.port)
    stop_mailers(app)
    owner = forgotten(app, smtp)
    other = forgotten(app, smtp, "other@example.org")
    ask_reset(app, owner.username)
    token, _ = mailed_token(smtp)
    user_id, asked, mac = token.split("-")
    other_id = other.web_get(action="me").get_json()["user"]["id"]
    flipped = mac[:-1] + ("a" if mac[-1] != "a" else "b")
    for wrong in (f"{user_id}-{asked}-{flipped}", f"{other_id}-{asked}-{mac}",
                  f"{user_id}-{int(asked) - 1}-{mac}", f"{user_id}-{asked}", "", " ", "x" * 100,
                  f"{'9' * 15}-{asked}-{mac}", f"{user_id}-{'9' * 12}-{mac}", "１-２-３"):
        r = anonymous(app).web_post("reset_password", code=wrong, newPassword=NEW_PASSWORD)
        assert_web_error(r, 400, "invalid_request")
    # the link's own code with another account's name beside it: altered, refused (a password
    # manager would have saved the new password under that other name)
    r = anonymous(app).web_post("reset_password", code=token, newPassword=NEW_PASSWORD,
                                username=other.username)
    assert assert_web_error(r, 400, "invalid_request")["error"].startswith("code: ")
    for name, person in ((owner.username, owner), (other.username, other)):
        assert anonymous(app).web_post("login", username=name,
                                       password=person.password).status_code == 200
    # its own name, in any case, or none (a code typed in): the link works
    r = anonymous(app).web_post("reset_password", code=token, newPassword=NEW_PASSWORD,
                                username=owner.username.upper())
    assert r.status_code == 200, r.get_json()


@pytest.mark.parametrize("body", [
    {"account": None}, {"account": 5}, {"account": ["a"]}, {"account": {"a": 1}},
    {"account": ""}, {"account": "   "}, {"account": "a" * 255}, {"account": "a\nb"}, {},
    {"account": "alice", "extra": 1},
])
def test_a_malformed_ask_is_a_400_naming_its_field(settings, smtp, stop_mailers, body):
    app = mail_app(settings, smtp.port)
    stop_mailers(app)
    assert_web_error(anonymous(app).web_post("forgot_password", **body), 400, "invalid_request")


@pytest.mark.parametrize("body", [
    {"code": 1, "newPassword": NEW_PASSWORD}, {"code": "1-2-" + "a" * 24, "newPassword": "short"},
    {"code": "1-2-" + "a" * 24, "newPassword": None}, {"newPassword": NEW_PASSWORD},
    {"code": "1-2-" + "a" * 24, "newPassword": "x" * 129},
    {"code": "1-2-" + "a" * 24, "newPassword": NEW_PASSWORD, "username": 5},
    {"code": "1-2-" + "a" * 24, "newPassword": NEW_PASSWORD, "username": "a" * 25},
])
def test_a_malformed_reset_is_a_400(settings, smtp, stop_mailers, body):
    app = mail_app(settings, smtp.port)
    stop_mailers(app)
    assert_web_error(anonymous(app).web_post("reset_password", **body), 400, "invalid_request")


def test_asks_are_counted_per_name_or_address_whether_or_not_it_names_anyone(
        settings, smtp, stop_mailers):
    app = mail_app(settings, smtp.port, rate_password_reset="2/day")
    stop_mailers(app)
    owner = forgotten(app, smtp)
    for n in (1, 2):
        ask_reset(app, owner.username)
        smtp.wait(n)
    assert_web_error(anonymous(app).web_post("forgot_password", account=owner.username.upper()),
                     429, "rate_limited")
    for account in ("nobody_here", "nobody@example.org"):  # the same answers, no mail
        for _ in range(2):
            ask_reset(app, account)
        assert_web_error(anonymous(app).web_post("forgot_password", account=account.upper()),
                         429, "rate_limited")
    time.sleep(0.3)
    assert [e.rcpt_tos for e in smtp.envelopes] == [["owner@example.org"]] * 2


def test_wrong_codes_are_bounded_per_network_before_any_hashing(settings, smtp, stop_mailers):
    app = mail_app(settings, smtp.port, rate_login_client="3/15minute")
    stop_mailers(app)
    owner = forgotten(app, smtp)
    ask_reset(app, owner.username)
    token, _ = mailed_token(smtp)
    guesser = anonymous(app)
    for _ in range(3):
        assert_web_error(guesser.web_post("reset_password", code="1-2-" + "a" * 24,
                                          newPassword=NEW_PASSWORD), 400)
    # the window is full: even the right code waits
    assert_web_error(guesser.web_post("reset_password", code=token,
                                      newPassword=NEW_PASSWORD), 429, "rate_limited")
    assert anonymous(app).web_post("login", username=owner.username,
                                   password=owner.password).status_code == 200


def test_one_link_sent_twice_at_once_sets_one_password(settings, smtp, stop_mailers):
    app = mail_app(settings, smtp.port)
    stop_mailers(app)
    owner = forgotten(app, smtp)
    ask_reset(app, owner.username)
    token, _ = mailed_token(smtp)
    passwords = [f"racing password {n:02d}" for n in range(6)]
    statuses = {}
    start = threading.Barrier(len(passwords))

    def reset(password):
        browser = anonymous(app)
        start.wait()
        statuses[password] = browser.web_post("reset_password", code=token,
                                              newPassword=password).status_code

    threads = [threading.Thread(target=reset, args=(p,)) for p in passwords]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    [winner] = [p for p, status in statuses.items() if status == 200]
    assert sorted(statuses.values()) == [200] + [400] * (len(passwords) - 1)
    for password in passwords:
        ok = anonymous(app).web_post("login", username=owner.username,
                                     password=password).status_code == 200
        assert ok == (password == winner)


def test_a_person_suspended_after_the_mail_keeps_the_old_password(settings, smtp, stop_mailers):
    app = mail_app(settings, smtp.port)
    rt = app.config["LOBBYTALKS"]
    stop_mailers(app)
    owner = forgotten(app, smtp)
    ask_reset(app, owner.username)
    token, _ = mailed_token(smtp)
    admin = Person(app).register()
    accounts.set_admin(rt.db, admin.username, True)
    admin_id = admin.web_get(action="me").get_json()["user"]["id"]
    before = accounts.password_hash_of(rt.db, owner.username)
    moderation.suspend(rt.db, admin_id, owner.username, "spam", now=clock.now())
    assert_web_error(anonymous(app).web_post("reset_password", code=token,
                                             newPassword=NEW_PASSWORD), 403, "forbidden")
    assert accounts.password_hash_of(rt.db, owner.username) == before


def test_without_a_mail_server_the_pages_send_people_to_the_admins(settings):
    app = create_app(settings.with_overrides(admin_contact="admins@example.org"))
    visitor = anonymous(app)
    r = visitor.web_post("forgot_password", account="anyone")
    assert_web_error(r, 409, "invalid_request")
    login = visitor.http.get("/login?lang=en").get_data(as_text=True)
    assert "admins@example.org" in login and 'href="/forgot-password"' not in login
    for path in ("/forgot-password?lang=en", "/reset-password?lang=en"):
        page = visitor.http.get(path)
        html = page.get_data(as_text=True)
        assert page.status_code == 200 and 'id="recovery-no-mail"' in html
        assert "<form" not in html.split("<main", 1)[1] and "admins@example.org" in html


def test_with_a_mail_server_the_login_page_leads_to_the_forms(settings, smtp, stop_mailers):
    app = mail_app(settings, smtp.port)
    stop_mailers(app)
    visitor = anonymous(app)
    login = visitor.http.get("/login?lang=en").get_data(as_text=True)
    assert 'href="/forgot-password"' in login
    forgot = visitor.http.get("/forgot-password?lang=en").get_data(as_text=True)
    assert 'data-action="forgot_password"' in forgot and 'name="account"' in forgot
    reset = visitor.http.get("/reset-password?lang=en").get_data(as_text=True)
    assert 'data-action="reset_password"' in reset and 'name="code"' in reset
    assert 'name="newPassword"' in reset and 'autocomplete="new-password"' in reset
    for page in (forgot, reset):  # as test_web_pages asks of every page with a form
        forms = re.findall(r"<form\b[^>]*api-form[^>]*>", page)
        assert forms and all('method="post"' in form for form in forms)
        ids = set(re.findall(r'\bid="([^"]+)"', page))
        for refs in re.findall(r'aria-(?:describedby|labelledby)="([^"]*)"', page):
            assert set(refs.split()) <= ids, refs


def test_a_link_that_fails_to_go_is_not_retried_and_the_log_keeps_it_secret(
        settings, smtp, caplog, clock_file):
    app = mail_app(settings, smtp.port)
    rt = app.config["LOBBYTALKS"]
    rt.mailer.stop()  # sent by hand below
    owner = forgotten(app, smtp, by_hand=True)
    user_id = owner.web_get(action="me").get_json()["user"]["id"]
    due = "SELECT password_reset_due FROM users WHERE id = :id"
    # the mail server goes away: one try, logged without the address or the link
    ask_reset(app, owner.username)
    rt.mailer.settings = rt.mailer.settings.with_overrides(smtp_port=free_port())
    with caplog.at_level("INFO", logger="lobbytalks.mail"):
        assert rt.mailer.drain() == 0
    assert f"mailing a password-reset link to user {user_id} failed" in caplog.text
    assert "owner@example.org" not in caplog.text and f"{user_id}-" not in caplog.text
    assert rt.db.value(due, {"id": user_id}) == 0
    # back again, a request older than a link's hour is not mailed at all
    rt.mailer.settings = rt.mailer.settings.with_overrides(smtp_port=smtp.port)
    ask_reset(app, owner.username)
    advance(clock_file, password_reset.VALID_SECONDS + 1)
    assert rt.mailer.drain() == 0 and smtp.envelopes == []
    ask_reset(app, owner.username)
    assert rt.mailer.drain() == 1


def test_without_the_sites_address_the_mail_gives_the_code_and_the_page_to_enter_it(
        settings, smtp, stop_mailers):
    app = create_app(settings.with_overrides(smtp_host="127.0.0.1", smtp_port=smtp.port,
                                             smtp_security="none"))
    stop_mailers(app)
    owner = forgotten(app, smtp)
    ask_reset(app, owner.username)
    [mail] = smtp.wait(1)
    body = mail.get_content()
    code = re.search(r"Reset code: (\S+)", body).group(1)
    assert "http" not in body and "link" not in body.split("Reset code")[0].split("Someone")[1]
    assert '“Set a new password” page (/reset-password)' in body
    r = anonymous(app).web_post("reset_password", code=code, newPassword=NEW_PASSWORD)
    assert r.status_code == 200, r.get_json()
    # and the pages say what such a mail holds: a code to enter, not a link to open
    visitor = anonymous(app)
    forgot = visitor.http.get("/forgot-password?lang=en").get_data(as_text=True)
    assert "a reset mail is on its way. Enter its reset code here." in forgot
    reset = visitor.http.get("/reset-password?lang=en").get_data(as_text=True)
    assert "Paste the reset code from the reset mail." in reset
    assert "link" not in forgot.split('data-done="')[1].split('"')[0] + reset.split(
        'id="f-code-hint"')[1].split("</p>")[0]
    linked_app = mail_app(settings, smtp.port)  # the mails link: the pages say so
    stop_mailers(linked_app)
    assert "Open its link" in anonymous(linked_app).http.get("/forgot-password?lang=en").get_data(as_text=True)


def test_an_easy_new_password_is_refused_and_the_link_still_works(settings, smtp, stop_mailers):
    app = mail_app(settings, smtp.port)
    stop_mailers(app)
    owner = forgotten(app, smtp)
    ask_reset(app, owner.username)
    token, _ = mailed_token(smtp)
    r = anonymous(app).web_post("reset_password", code=token,
                                newPassword=f"{owner.username}2024")
    assert assert_web_error(r, 400, "invalid_request")["error"].startswith("newPassword: ")
    r = anonymous(app).web_post("reset_password", code=token, newPassword=NEW_PASSWORD)
    assert r.status_code == 200, r.get_json()


def test_strangers_spending_a_names_asks_do_not_keep_its_owners_browser_from_asking(
        settings, smtp, stop_mailers):
    app = mail_app(settings, smtp.port, rate_password_reset="2/day")
    stop_mailers(app)
    owner = forgotten(app, smtp)  # registered in this browser: it knows the account
    for n in (1, 2):
        ask_reset(app, owner.username)
        smtp.wait(n)
    assert_web_error(anonymous(app).web_post("forgot_password", account=owner.username),
                     429, "rate_limited")
    smtp.envelopes.clear()
    r = owner.web_post("forgot_password", account=owner.username)
    assert r.status_code == 200 and r.get_json() == {"ok": True}
    [mail] = smtp.wait(1)
    assert mail["To"] == "owner@example.org"
