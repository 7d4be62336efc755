"""New passwords too easy to guess are refused where LobbyTalks' own actions set one
(changing, resetting, the operator's reset); registering keeps the protocol's 10–128 rule
alone, and logins never check, so old ones still work."""
from __future__ import annotations

import io

import pytest
from conftest import Person, run_cli
from helpers import assert_web_error

from lobbytalks.password_rules import too_easy
from lobbytalks.services import accounts


@pytest.mark.parametrize("password", [
    "aaaaaaaaaa", "abcabcabcabc", "1111122222", "          xy",       # repetitions
    "1234567890", "0987654321", "abcdefghijk", "qwertyuiop", "QWERTY uiop", "1q2w3e4r5t",
    "zyxwvutsrqpon", "!@#$%^&*()_+", "asdfghjkl;'",                # runs
    "password123", "Password123!", "P@ssw0rd2024", "iloveyou12", "summer2024!", "woaini1314",
    "trustno1!!!", "admin12345",                                     # common words
    "lobbytalks2024", "alice_1234567", "Alice_Alice_1",              # the site, the name
])
def test_easy_passwords_are_told_apart(password):
    assert too_easy(password, "alice_") or too_easy(password, "alice"), password


@pytest.mark.parametrize("password", [
    "correct horse 1", "tulip mar9", "a brand new secret 7", "racing password 00",
    "Xk9#mq2Lw!", "1357924680", "我的密码是三只小猫", "hunter2 correct horse", "passwordless club",
])
def test_ordinary_passwords_pass(password):
    assert not too_easy(password, "alice")


def test_changing_refuses_an_easy_one_registering_takes_what_the_protocol_allows(app):
    # the protocol's register: any password of 10–128 characters (a client relies on it)
    for name, password in (("bob_the", "Password123!"), ("carol_1", "a" * 10)):
        assert Person(app).web_post("register", username=name,
                                    password=password).status_code == 200
    person = Person(app).register()
    r = person.web_post("change_password", currentPassword=person.password,
                        newPassword="qwertyuiop[]")
    assert assert_web_error(r, 400, "invalid_request")["error"].startswith("newPassword: ")
    assert Person(app).web_post("login", username=person.username,
                                password=person.password).status_code == 200


def test_the_register_page_asks_for_the_rule_and_is_held_to_it(tmp_path):
    """The register page advised against "password123" and took it; the same password was
    refused on /settings. The page now asks for the rule (an extension field); a refusal
    spends none of the client's registrations."""
    from conftest import settings_for
    from lobbytalks import create_app
    app = create_app(settings_for(tmp_path / "data", rate_register="2/hour"))
    db = app.config["LOBBYTALKS"].db
    for password in ("password123", "1234567890", "bob_the_1bob_the_1"):
        r = Person(app).web_post("register", username="bob_the_1", password=password,
                                 checkPassword=True)
        assert assert_web_error(r, 400, "invalid_request")["error"].startswith("password: ")
    assert db.value("SELECT COUNT(*) FROM users WHERE username = 'bob_the_1'") == 0
    r = Person(app).web_post("register", username="bob_the_1", password="password123",
                             checkPassword="yes")
    assert_web_error(r, 400, "invalid_request")  # a boolean, nothing else
    assert Person(app).web_post("register", username="bob_the_1", password="maple river lamp",
                                checkPassword=True).status_code == 200
    assert Person(app).web_post("register", username="carol_2", password="password123",
                                checkPassword=False).status_code == 200  # the protocol's rule
    page = Person(app).http.get("/register").get_data(as_text=True)
    assert '<input type="checkbox" name="checkPassword" checked hidden>' in page


def test_an_easy_password_chosen_before_the_rule_still_logs_in(app):
    rt = app.config["LOBBYTALKS"]
    person = Person(app).register()
    user_id = person.web_get(action="me").get_json()["user"]["id"]
    accounts.set_password(rt.db, user_id, "1234567890", cost=rt.settings.password_cost)
    assert Person(app).web_post("login", username=person.username,
                                password="1234567890").status_code == 200


def test_the_operators_chosen_password_is_held_to_the_rule(app, capsys, monkeypatch):
    Person(app, username="irene").register()
    data_dir = app.config["LOBBYTALKS"].settings.data_dir
    monkeypatch.setattr("sys.stdin", io.StringIO("irene2024irene\n"))
    assert run_cli(["admin", "reset-password", "irene", "--password-stdin"], data_dir) == 1
    assert "too easy to guess" in capsys.readouterr().err
    assert Person(app).web_post("login", username="irene",
                                password="correct horse 1").status_code == 200
