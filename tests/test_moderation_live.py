"""Moderation against a real `lobbytalks serve`, and the audit log read with `lobbytalks admin log`
while it serves."""
from __future__ import annotations

import os
import subprocess
import sys

import requests

import pgtest
from conftest import LiveServer, web_session

ADMIN = {"LOBBYTALKS_ADMIN_USERNAME": "chief", "LOBBYTALKS_ADMIN_PASSWORD": "chief password 1"}


def command(server: LiveServer, *argv: str) -> subprocess.CompletedProcess:
    """`lobbytalks ARGV` in its own process on the server's data folder and database."""
    return subprocess.run([sys.executable, "-m", "lobbytalks", *argv, "--data-dir", str(server.data_dir)],
                          env={**os.environ, **pgtest.env_for(server.data_dir)},
                          capture_output=True, text=True, timeout=60)


def admin_log(server: LiveServer, *extra: str) -> subprocess.CompletedProcess:
    return command(server, "admin", "log", *extra)


def test_suspension_over_http_and_the_audit_log_on_the_command_line(tmp_path):
    server = LiveServer(tmp_path / "live", env=ADMIN)
    try:
        base = server.url
        chief = requests.Session()
        assert chief.post(base + "/api/community", json={"action": "login", "username": "chief",
                                                          "password": "chief password 1"}).ok
        web_session(server, "spammer")
        r = chief.post(base + "/api/community",
                       json={"action": "suspend_user", "username": "spammer", "reason": "批量广告"})
        assert r.status_code == 200, r.text
        login = requests.post(base + "/api/community", json={
            "action": "login", "username": "spammer", "password": "correct horse 1"})
        assert login.status_code == 403 and "批量广告" in login.json()["error"]
        assert "xia_session" not in login.cookies
        assert chief.get(base + "/admin").status_code == 200

        empty_before = command(server, "admin", "grant", "spammer")
        assert empty_before.returncode == 0, empty_before.stderr

        out = admin_log(server)
        assert out.returncode == 0, out.stderr
        lines = [line.split("\t") for line in out.stdout.splitlines()]
        assert [line[1:] for line in lines] == [
            ["chief", "suspend_user", "user:spammer", "批量广告"],
            ["(command line)", "grant_admin", "user:spammer", ""],
        ]
        assert lines[0][0].endswith("Z")
        newest = admin_log(server, "--limit", "1")
        assert newest.stdout.splitlines() == [out.stdout.splitlines()[-1]]
        # Secrets never appear: not the admin's password, not a session cookie.
        cookie = chief.cookies.get("xia_session")
        assert cookie and cookie not in out.stdout and "chief password 1" not in out.stdout
        for bad, code in ((["admin", "log", "someone"], 2), (["admin", "grant"], 2),
                          (["admin", "log", "--limit", "0"], 1)):
            run = command(server, *bad)  # 2: what argparse refuses, with its usage line
            assert run.returncode == code and "lobbytalks" in run.stderr.splitlines()[-1]
    finally:
        server.stop()


def test_admin_log_needs_a_database_and_says_when_it_is_empty(tmp_path):
    missing = tmp_path / "missing"
    out = subprocess.run([sys.executable, "-m", "lobbytalks", "admin", "log", "--data-dir",
                          str(missing)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "no database" in out.stderr and "Traceback" not in out.stderr
    assert not missing.exists()
    subprocess.run([sys.executable, "-m", "lobbytalks", "init", "--data-dir", str(missing)],
                   check=True, capture_output=True, timeout=60)
    out = subprocess.run([sys.executable, "-m", "lobbytalks", "admin", "log", "--data-dir",
                          str(missing)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "(no admin actions recorded)"
