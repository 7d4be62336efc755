"""The admin commands as an admin runs them: backup, restore, check, config, serve's stop."""
from __future__ import annotations

import io
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import requests

from lobbytalks import create_app, serverlock
from lobbytalks.cli import ProgressBar, main
from lobbytalks.db import latest_version
from lobbytalks.settings import Settings
from lobbytalks.uri_secrets import mask_uri_credentials

from conftest import FAST_ARGON2_KIB, LiveServer, Person, joined_person, settings_for, web_session


def run(*argv: str) -> int:
    return main(list(argv))


def cli(*argv: str) -> subprocess.CompletedProcess:
    """The command in its own process, as an admin's shell or cron runs it."""
    return subprocess.run([sys.executable, "-m", "lobbytalks", *argv], capture_output=True,
                          text=True, timeout=60)


def usernames(path: Path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        return {r[0] for r in conn.execute("SELECT username FROM users")}
    finally:
        conn.close()


@pytest.fixture
def data_dir(app) -> str:
    return app.config["LOBBYTALKS"].settings.data_dir


def add_private_question(app) -> None:
    asker = joined_person(app)
    asker.ask(privateContext="只给回答者看的内部信息")


# --- backup ------------------------------------------------------------------------------------

@pytest.mark.sqlite_only
def test_backup_writes_a_checked_copy_and_explains_the_key(app, data_dir, tmp_path, capsys):
    Person(app, username="alice").register()
    add_private_question(app)
    dest = tmp_path / "nightly.db"
    assert run("backup", "--data-dir", data_dir, str(dest)) == 0
    out = capsys.readouterr().out
    assert f"backup written: {dest}" in out and "integrity_check ok" in out
    assert "secret key is NOT in the backup" in out and "sealed with key id(s) k1" in out
    assert "--with-key" in out and str(dest) + ".key" in out
    assert "alice" in usernames(dest)
    assert not dest.with_name("nightly.db.key").exists()

    # an existing file is never overwritten by accident
    assert run("backup", "--data-dir", data_dir, str(dest)) == 1
    assert "already exists" in capsys.readouterr().err
    assert run("backup", "--data-dir", data_dir, "--force", str(dest)) == 0


@pytest.mark.sqlite_only
@pytest.mark.parametrize("target", [".", "/", "new-folder/", "backups"])
def test_backup_into_a_folder_is_one_line_and_writes_nothing(app, data_dir, tmp_path, capsys,
                                                             monkeypatch, target):
    """"." and "/" were a traceback (the key file's name made from an empty name), and
    "new-folder/" wrote a backup file named new-folder."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "backups").mkdir()
    before = sorted(tmp_path.rglob("*"))
    assert run("backup", "--data-dir", data_dir, target) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"lobbytalks: {target} is a folder; name the backup file"), err
    assert sorted(tmp_path.rglob("*")) == before


@pytest.mark.sqlite_only
def test_forced_over_an_older_backup_its_key_left_beside_is_told_of(app, data_dir, tmp_path,
                                                                    capsys):
    """--force without --with-key leaves FILE.key as it was: after a key rotation it no
    longer opens the backup beside it, and nothing said so."""
    add_private_question(app)
    dest = tmp_path / "b.db"
    assert run("backup", "--with-key", "--data-dir", data_dir, str(dest)) == 0
    assert run("backup", "--force", "--data-dir", data_dir, str(dest)) == 0
    assert "WARNING" not in capsys.readouterr().out  # the same key: it still opens it
    app.config["LOBBYTALKS"].db.close()
    assert run("rotate-key", "--data-dir", data_dir) == 0
    assert run("backup", "--force", "--data-dir", data_dir, str(dest)) == 0
    out = capsys.readouterr().out
    assert f"WARNING: {dest}.key, left from an older backup, does not open this one" in out


@pytest.mark.sqlite_only
def test_backup_with_key_writes_an_owner_only_key_file(app, data_dir, tmp_path, capsys):
    add_private_question(app)
    dest = tmp_path / "b.db"
    assert run("backup", "--with-key", "--data-dir", data_dir, str(dest)) == 0
    key = tmp_path / "b.db.key"
    out = capsys.readouterr().out
    assert f"key written: {key} (mode 0600" in out
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert key.read_text() == (Path(data_dir) / "secret.key").read_text()
    # a second run must not overwrite the key beside an existing backup either
    dest.unlink()
    assert run("backup", "--with-key", "--data-dir", data_dir, str(dest)) == 1
    assert "b.db.key already exists" in capsys.readouterr().err
    assert not dest.exists()


@pytest.mark.sqlite_only
def test_no_force_lets_a_backup_overwrite_the_installations_own_files(app, data_dir, tmp_path,
                                                                      capsys):
    """The secret key above all: written over, every private context would be lost."""
    add_private_question(app)
    data = Path(data_dir)
    key = (data / "secret.key").read_text()
    for name in ("secret.key", "lobbytalks.db-wal", "lobbytalks.db-shm", "lobbytalks.db.lock"):
        existed = (data / name).exists()
        assert run("backup", "--force", "--data-dir", data_dir, str(data / name)) == 1, name
        assert "is one of this installation's own files" in capsys.readouterr().err
        assert (data / name).exists() == existed, name
    # nor the key written beside a backup: "secret" + ".key"
    assert run("backup", "--force", "--with-key", "--data-dir", data_dir, str(data / "secret")) == 1
    assert "secret.key is one of this installation's own files" in capsys.readouterr().err
    assert not (data / "secret").exists()
    assert (data / "secret.key").read_text() == key
    assert run("check", "--data-dir", data_dir) == 0


@pytest.mark.sqlite_only
def test_no_force_writes_over_a_key_file_named_elsewhere(app, data_dir, tmp_path, capsys,
                                                          monkeypatch):
    """LOBBYTALKS_SECRET_KEY_FILE (a Docker or Kubernetes secret), or the key of another
    data folder written as a backup's key: both were overwritten, the key lost with them."""
    add_private_question(app)
    key = (Path(data_dir) / "secret.key").read_text()
    elsewhere = tmp_path / "keys" / "lobbytalks.key"
    elsewhere.parent.mkdir()
    elsewhere.write_text(key)
    monkeypatch.setenv("LOBBYTALKS_SECRET_KEY_FILE", str(elsewhere))
    assert run("backup", "--force", "--data-dir", data_dir, str(elsewhere)) == 1
    assert "it is not a SQLite database" in capsys.readouterr().err
    assert elsewhere.read_text() == key
    other = tmp_path / "other"
    other.mkdir()
    (other / "secret.key").write_text("k1:" + "B" * 43 + "=\n")
    assert run("backup", "--force", "--with-key", "--data-dir", data_dir,
               str(other / "secret")) == 1
    assert "it is the name a data folder keeps its secret key under" in capsys.readouterr().err
    assert (other / "secret.key").read_text() == "k1:" + "B" * 43 + "=\n"
    assert not (other / "secret").exists()  # refused before the backup was made
    # any key file with no older backup beside it: another installation's, a TLS key
    for name in ("prod", "server"):
        (other / f"{name}.key").write_text(f"{name}'s own key\n")
        assert run("backup", "--force", "--with-key", "--data-dir", data_dir,
                   str(other / name)) == 1
        assert "it is not the key of an older backup" in capsys.readouterr().err
        assert (other / f"{name}.key").read_text() == f"{name}'s own key\n"
        assert not (other / name).exists()
    # an older backup and its key are what --force replaces
    assert run("backup", "--with-key", "--data-dir", data_dir, str(other / "b.db")) == 0
    assert run("backup", "--force", "--with-key", "--data-dir", data_dir, str(other / "b.db")) == 0
    assert (other / "b.db.key").read_text() == key


@pytest.mark.sqlite_only
def test_a_backup_where_no_file_can_be_is_one_line(app, data_dir, tmp_path):
    (tmp_path / "a-file").write_text("")
    done = cli("backup", "--data-dir", str(data_dir), str(tmp_path / "a-file" / "b.db"))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("lobbytalks: Not a directory: "), done.stderr


@pytest.mark.sqlite_only
def test_backup_takes_the_db_option_and_shows_progress_for_large_files(settings, tmp_path,
                                                                       capsys):
    create_app(settings).config["LOBBYTALKS"].db.close_thread_connection()
    conn = sqlite3.connect(settings.db_path)
    conn.executemany("INSERT INTO users (username, password_hash, created) VALUES (?, ?, 0)",
                     ((f"bulk{i}", "h" * 2000) for i in range(3000)))  # ~6 MiB: two steps
    conn.commit()
    conn.close()
    dest = tmp_path / "big.db"
    assert run("backup", "--db", str(settings.db_path), str(dest)) == 0
    err = capsys.readouterr().err
    assert "backup: 100%" in err and "backup: 0%" not in err.splitlines()[-1]
    assert len(usernames(dest)) == 3000


def test_progress_bar_draws_in_place_on_a_terminal_and_in_lines_elsewhere():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    log = io.StringIO()
    bar = ProgressBar("backup", log, min_pages=10)
    for done in range(0, 101, 5):
        bar(done, 100)
    assert log.getvalue().splitlines() == [f"backup: {p}% ({p}/100 pages)" for p in
                                           range(0, 101, 10)]
    term = Terminal()
    bar = ProgressBar("restore", term, min_pages=10)
    bar(50, 100)
    bar(100, 100)
    assert term.getvalue() == ("\rrestore [###############...............]  50%"
                               "\rrestore [##############################] 100%\n")
    quiet = io.StringIO()
    ProgressBar("backup", quiet, min_pages=10)(3, 3)  # small databases: no bar at all
    assert quiet.getvalue() == ""


# --- restore -----------------------------------------------------------------------------------

@pytest.mark.sqlite_only
def test_restore_asks_first_and_refuses_without_a_terminal(app, data_dir, tmp_path, capsys,
                                                          monkeypatch):
    backup = tmp_path / "b.db"
    assert run("backup", "--data-dir", data_dir, str(backup)) == 0
    monkeypatch.setattr(sys, "stdin", io.StringIO("yes\n"))  # not a terminal
    assert run("restore", "--data-dir", data_dir, str(backup)) == 1
    assert "pass --yes" in capsys.readouterr().err
    assert not list(Path(data_dir).glob("*.before-restore-*"))


@pytest.mark.sqlite_only
def test_restore_round_trip(app, data_dir, tmp_path, capsys):
    Person(app, username="alice").register()
    add_private_question(app)
    backup = tmp_path / "b.db"
    assert run("backup", "--data-dir", data_dir, str(backup)) == 0
    Person(app, username="bob").register()
    capsys.readouterr()

    assert run("restore", "--data-dir", data_dir, "--yes", str(backup)) == 0
    out = capsys.readouterr().out
    db_path = Path(data_dir) / "lobbytalks.db"
    assert f"restored {backup} into {db_path} (schema version {latest_version()})" in out
    (kept,) = Path(data_dir).glob("lobbytalks.db.before-restore-*[0-9]Z")  # its -wal beside it
    assert f"kept as {kept}" in out
    assert "ended 2 web session(s)" in out
    assert "key: the key from" in out and "opens this database's private context" in out
    assert "alice" in usernames(db_path) and "bob" not in usernames(db_path)
    assert "bob" in usernames(kept)
    assert run("check", "--data-dir", data_dir) == 0


@pytest.mark.sqlite_only
def test_restore_goes_where_the_flag_says_whatever_the_environment_names(
        app, data_dir, tmp_path, capsys, monkeypatch):
    """A systemd EnvironmentFile's LOBBYTALKS_DB must not turn `restore --data-dir X` into a
    restore of another file (flags win over the environment)."""
    Person(app, username="alice").register()
    backup = tmp_path / "b.db"
    assert run("backup", "--data-dir", data_dir, str(backup)) == 0
    Person(app, username="bob").register()
    elsewhere = tmp_path / "elsewhere.db"
    elsewhere.write_bytes(backup.read_bytes())
    monkeypatch.setenv("LOBBYTALKS_DB", str(elsewhere))
    monkeypatch.setenv("LOBBYTALKS_DATABASE_URL", f"sqlite:///{elsewhere}")
    capsys.readouterr()
    assert run("restore", "--data-dir", data_dir, "--yes", str(backup)) == 0
    db_path = Path(data_dir) / "lobbytalks.db"
    assert f"restored {backup} into {db_path}" in capsys.readouterr().out
    assert "bob" not in usernames(db_path)
    assert run("check", "--db", str(backup)) == 0
    assert f"database: {backup}" in capsys.readouterr().out


@pytest.mark.sqlite_only
def test_restore_with_the_wrong_key_fails_and_with_key_fixes_it(app, data_dir, tmp_path,
                                                                capsys):
    add_private_question(app)
    backup = tmp_path / "b.db"
    assert run("backup", "--with-key", "--data-dir", data_dir, str(backup)) == 0
    other = tmp_path / "elsewhere"  # a new machine with its own, different key
    create_app(settings_for(other)).config["LOBBYTALKS"].db.close_thread_connection()
    capsys.readouterr()

    assert run("restore", "--data-dir", str(other), "--yes", str(backup)) == 1
    err = capsys.readouterr().err
    assert "WARNING: the secret key does not match this database" in err
    assert "The database is restored, but the server refuses to start" in err
    assert f"{backup}.key: rerun with --with-key" in err
    with pytest.raises(RuntimeError, match="does not match"):
        create_app(settings_for(other))

    # the key of another installation beside the backup: installed, and said not to open it
    own_key = Path(f"{backup}.key").read_text()
    Path(f"{backup}.key").write_text((other / "secret.key").read_text())
    assert run("restore", "--data-dir", str(other), "--yes", "--with-key", str(backup)) == 1
    err = capsys.readouterr().err
    assert f"The key installed from {backup}.key does not open it either" in err
    assert "rerun with --with-key" not in err
    Path(f"{backup}.key").write_text(own_key)

    assert run("restore", "--data-dir", str(other), "--yes", "--with-key", str(backup)) == 0
    captured = capsys.readouterr()
    assert "installed the key from" in captured.out and "previous key kept as" in captured.out
    assert "WARNING" not in captured.err
    assert (other / "secret.key").read_text() == (Path(data_dir) / "secret.key").read_text()
    create_app(settings_for(other))  # starts: the key matches again


@pytest.mark.sqlite_only
def test_restore_and_rotate_key_refuse_while_the_database_is_served(tmp_path):
    server = LiveServer(tmp_path / "live")
    key = server.data_dir / "secret.key"
    try:
        web_session(server, "before_backup")
        backup = tmp_path / "b.db"
        assert cli("backup", "--data-dir", str(server.data_dir), str(backup)).returncode == 0
        web_session(server, "after_backup")
        refused = cli("restore", "--data-dir", str(server.data_dir), "--yes", str(backup))
        assert refused.returncode == 1
        assert "refusing to restore" in refused.stderr and "already being served" in \
            refused.stderr
        key_before = key.read_text()
        rotation = cli("rotate-key", "--data-dir", str(server.data_dir))
        assert rotation.returncode == 1 and "stop the server before rotating" in rotation.stderr
        # nor through a link to the served file (it took a lock of its own beside the link,
        # re-sealed every private context under a key the server did not have)
        linked = tmp_path / "linked"
        linked.mkdir()
        (linked / "lobbytalks.db").symlink_to(server.data_dir / "lobbytalks.db")
        (linked / "secret.key").write_text(key_before)
        rotation = cli("rotate-key", "--db", str(linked / "lobbytalks.db"))
        assert rotation.returncode == 1 and "stop the server before rotating" in rotation.stderr
        assert (linked / "secret.key").read_text() == key_before
        assert key.read_text() == key_before
        assert requests.get(server.url + "/healthz", timeout=5).json() == {"ok": True}
    finally:
        server.stop()
    assert usernames(server.data_dir / "lobbytalks.db") == {"before_backup", "after_backup"}


@pytest.mark.sqlite_only
def test_a_backup_from_before_a_key_rotation_still_opens(app, data_dir, tmp_path, capsys):
    add_private_question(app)
    backup = tmp_path / "b.db"
    assert run("backup", "--data-dir", data_dir, str(backup)) == 0
    assert run("rotate-key", "--data-dir", data_dir) == 0
    assert "under key k2" in capsys.readouterr().out
    assert run("restore", "--data-dir", data_dir, "--yes", str(backup)) == 0
    captured = capsys.readouterr()
    assert "opens this database's private context" in captured.out  # k1 stays in the file
    assert "WARNING" not in captured.err


@pytest.mark.sqlite_only
def test_rotate_key_with_the_key_in_the_environment_says_the_steps_that_work(
        app, data_dir, capsys, monkeypatch):
    key = (Path(data_dir) / "secret.key").read_text().strip()
    monkeypatch.setenv("LOBBYTALKS_SECRET_KEY", key)
    assert run("rotate-key", "--data-dir", data_dir) == 1
    said = capsys.readouterr().err
    assert "unset the variable" in said and "DATA_DIR/secret.key" in said
    # following them: the key written to the file, the variable unset
    monkeypatch.delenv("LOBBYTALKS_SECRET_KEY")
    assert run("rotate-key", "--data-dir", data_dir) == 0


@pytest.mark.sqlite_only
def test_rotate_key_that_cannot_write_says_so_and_adds_no_key(app, data_dir, capsys,
                                                               monkeypatch):
    """A database refusing the re-sealing (read-only for a non-root operator) ended in a
    traceback, and each attempt left one more key in secret.key that nothing used."""
    from lobbytalks import key_rotation
    from lobbytalks.db import Q

    add_private_question(app)
    key_file = Path(data_dir) / "secret.key"
    before = key_file.read_bytes()

    class Refusing:  # the named queries, the re-sealing refused as a read-only file does
        reseal_private_context = "UPDATE no_such_table SET refused = 1"

        def __getattr__(self, name):
            return getattr(Q, name)
    monkeypatch.setattr(key_rotation, "Q", Refusing())
    assert run("rotate-key", "--data-dir", data_dir) == 1
    said = capsys.readouterr().err
    assert said.startswith("lobbytalks: nothing was rotated: no such table") and \
        "Traceback" not in said
    assert key_file.read_bytes() == before
    monkeypatch.undo()
    assert run("rotate-key", "--data-dir", data_dir) == 0  # and it works once it can write
    assert key_file.read_bytes() != before


@pytest.mark.sqlite_only
def test_rotate_key_on_a_damaged_row_says_so_in_one_line(app, data_dir, capsys):
    """A sealed value that no longer authenticates (a flipped byte) past the first one,
    which alone the keyring's check opens, ended in a traceback."""
    add_private_question(app)
    add_private_question(app)
    key_file = Path(data_dir) / "secret.key"
    before = key_file.read_bytes()
    app.config["LOBBYTALKS"].db.close()
    with sqlite3.connect(Path(data_dir) / "lobbytalks.db") as conn:
        # the last of the two: the first one is the keyring check's sample
        topic, blob = conn.execute("SELECT topic_id, private_context FROM question_versions "
                                   "WHERE private_context IS NOT NULL ORDER BY topic_id DESC"
                                   ).fetchone()
        conn.execute("UPDATE question_versions SET private_context = ? WHERE topic_id = ?",
                     (blob[:-1] + bytes([blob[-1] ^ 1]), topic))
    assert run("rotate-key", "--data-dir", data_dir) == 1
    said = capsys.readouterr().err
    assert said.startswith("lobbytalks: nothing was rotated: private context of 't_")
    assert "does not authenticate" in said and "Traceback" not in said
    assert key_file.read_bytes() == before


# --- the key test: a backup under load restores to a complete, healthy database -------------

@pytest.mark.sqlite_only
@pytest.mark.slow
def test_backup_while_serving_under_writes_restores_everything_committed_before(tmp_path):
    server = LiveServer(tmp_path / "live", env={"LOBBYTALKS_RATE_REGISTER": "100000/hour"})
    committed: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()

    def writer(n: int) -> None:
        http = requests.Session()
        i = 0
        while not stop.is_set():
            name = f"w{n}_{i}"
            r = http.post(server.url + "/api/community", timeout=30,
                          json={"action": "register", "username": name,
                                "password": "correct horse 1"})
            assert r.status_code == 200, r.text
            with lock:
                committed.append(name)
            i += 1

    threads = [threading.Thread(target=writer, args=(n,), daemon=True) for n in range(4)]
    try:
        for t in threads:
            t.start()
        while len(committed) < 20:
            stop.wait(0.05)
        with lock:
            before = set(committed)  # each got its 200: committed before the backup starts
        backup = tmp_path / "b.db"
        done = cli("backup", "--data-dir", str(server.data_dir), str(backup))
        assert done.returncode == 0, done.stderr
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=30)
        server.stop()

    target = tmp_path / "restored"
    restored = cli("restore", "--data-dir", str(target), "--yes", str(backup))
    assert restored.returncode == 0, restored.stderr
    check = cli("check", "--data-dir", str(target))
    assert check.returncode == 0, check.stdout
    assert "integrity_check: ok" in check.stdout and "foreign_key_check: ok" in check.stdout
    names = usernames(target / "lobbytalks.db")
    assert before <= names, before - names
    assert names <= set(committed)
    assert usernames(server.data_dir / "lobbytalks.db") == set(committed)


# --- check -------------------------------------------------------------------------------------

@pytest.mark.sqlite_only
def test_check_reports_and_exits_by_result(app, data_dir, capsys):
    assert run("check", "--data-dir", data_dir) == 0
    out = capsys.readouterr().out
    v = latest_version()
    assert f"schema version: {v} (this LobbyTalks knows up to {v}; up to date)" in out
    assert "integrity_check: ok" in out and "result: ok" in out
    conn = sqlite3.connect(Path(data_dir) / "lobbytalks.db")
    conn.execute("INSERT INTO sessions VALUES ('orphan', 12345, 0, 1)")
    conn.commit()
    conn.close()
    assert run("check", "--db", str(Path(data_dir) / "lobbytalks.db")) == 1
    out = capsys.readouterr().out
    assert "foreign_key_check: 1 problem(s)" in out and "PROBLEMS FOUND" in out


@pytest.mark.sqlite_only
@pytest.mark.parametrize("command", ["check", "rotate-key"])
def test_a_command_on_a_missing_file_creates_nothing(tmp_path, capsys, command):
    assert run(command, "--db", str(tmp_path / "nope.db")) == 1
    assert f"{tmp_path / 'nope.db'}: no such database file" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.sqlite_only
def test_a_key_from_a_file_variable_is_named_by_that_variable(app, data_dir, tmp_path, capsys,
                                                              monkeypatch):
    """With only LOBBYTALKS_SECRET_KEY_FILE set, the messages about the key named
    LOBBYTALKS_SECRET_KEY (unset) and the data folder's key file (not used)."""
    add_private_question(app)
    backup = tmp_path / "b.db"
    assert run("backup", "--data-dir", data_dir, str(backup)) == 0
    key_file = tmp_path / "docker-secret"
    key_file.write_text("k1:" + "B" * 43 + "=\n")  # a key, but not this backup's
    monkeypatch.setenv("LOBBYTALKS_SECRET_KEY_FILE", str(key_file))
    named = f"LOBBYTALKS_SECRET_KEY_FILE ({key_file})"
    other = tmp_path / "elsewhere"
    capsys.readouterr()
    assert run("restore", "--data-dir", str(other), "--yes", str(backup)) == 1
    err = capsys.readouterr().err
    assert f"until the key used with this backup is back: in {named}." in err, err
    assert "or LOBBYTALKS_SECRET_KEY." not in err

    key_file.write_text("not a key\n")
    for argv in (["serve", "--port", "1"], ["backup", "--with-key", str(tmp_path / "c.db")]):
        assert run(*argv, "--data-dir", str(other)) == 1, argv
        err = capsys.readouterr().err
        assert named in err and "Traceback" not in err, err


@pytest.mark.sqlite_only
def test_a_too_new_database_is_refused_cleanly_by_every_command(app, data_dir, capsys):
    conn = sqlite3.connect(Path(data_dir) / "lobbytalks.db")
    conn.execute("INSERT INTO schema_migrations VALUES (42, 'future', 0)")
    conn.commit()
    conn.close()
    for argv in (["serve", "--port", "1"], ["init"], ["admin", "grant", "x"]):
        assert run(*argv, "--data-dir", data_dir) == 1, argv
        err = capsys.readouterr().err
        assert err.startswith("lobbytalks: the database is at schema version 42, newer than "
                              "this LobbyTalks"), err
        assert "Traceback" not in err
    assert run("check", "--data-dir", data_dir) == 1
    assert "NEWER than this LobbyTalks" in capsys.readouterr().out
    assert not serverlock.in_use(Path(data_dir) / "lobbytalks.db")


# --- configuration and secrets in files --------------------------------------------------------

def test_secret_settings_read_files_and_config_masks_them(tmp_path, monkeypatch, capsys):
    password_file = tmp_path / "admin_password"
    password_file.write_text("s3cret from a file\n")
    key_file = tmp_path / "key"
    key_file.write_text("k1:" + "B" * 43 + "=\n")
    monkeypatch.setenv("LOBBYTALKS_ADMIN_USERNAME", "root_admin")
    monkeypatch.setenv("LOBBYTALKS_ADMIN_PASSWORD_FILE", str(password_file))
    monkeypatch.setenv("LOBBYTALKS_SECRET_KEY_FILE", str(key_file))
    monkeypatch.setenv("LOBBYTALKS_ARGON2_MEMORY_KIB", str(FAST_ARGON2_KIB))

    settings = Settings.load(data_dir=str(tmp_path / "data"), access_log=False)
    assert settings.admin_password == "s3cret from a file"  # trailing newline stripped
    assert settings.secret_key == "k1:" + "B" * 43 + "="
    app = create_app(settings)
    admin = Person(app, username="root_admin", password="s3cret from a file")
    assert admin.web_post("login", username="root_admin",
                          password="s3cret from a file").status_code == 200
    assert not (tmp_path / "data" / "secret.key").exists()  # the key came from the file

    assert run("config", "--data-dir", str(tmp_path / "data")) == 0
    out = capsys.readouterr().out
    assert "LOBBYTALKS_ADMIN_PASSWORD=****" in out and "LOBBYTALKS_SECRET_KEY=****" in out
    assert "LOBBYTALKS_ADMIN_USERNAME=root_admin" in out
    assert "s3cret" not in out and "BBBB" not in out


def test_config_masks_credentials_inside_uri_settings(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LOBBYTALKS_RATELIMIT_STORAGE", "redis://:hunter2pw@cache.internal:6379/0")
    monkeypatch.setenv("LOBBYTALKS_PUBLIC_URL", "https://talk.example.org")
    assert run("config", "--data-dir", str(tmp_path / "data")) == 0
    out = capsys.readouterr().out
    assert "LOBBYTALKS_RATELIMIT_STORAGE=redis://:****@cache.internal:6379/0" in out
    assert "hunter2pw" not in out
    assert "LOBBYTALKS_PUBLIC_URL=https://talk.example.org" in out  # nothing to hide stays


def test_config_fails_on_what_would_stop_serve(tmp_path, monkeypatch, capsys):
    data = tmp_path / "data"
    monkeypatch.setenv("LOBBYTALKS_WORKERS", "0")
    monkeypatch.setenv("LOBBYTALKS_SECRET_KEY", "k1:dG9vIHNob3J0")
    assert run("config", "--data-dir", str(data)) == 1
    captured = capsys.readouterr()
    assert "LOBBYTALKS_WORKERS=0" in captured.out  # the configuration is shown all the same
    assert captured.err.splitlines() == [
        "lobbytalks: --workers must be at least 1",
        "lobbytalks: LOBBYTALKS_SECRET_KEY: line 1: the key decodes to 9 bytes, expected 32"]
    assert "dG9v" not in captured.out + captured.err

    monkeypatch.delenv("LOBBYTALKS_SECRET_KEY")
    monkeypatch.setenv("LOBBYTALKS_WORKERS", "2")  # several processes need PostgreSQL
    assert run("config", "--data-dir", str(data)) == 1
    assert "needs a database several processes can share" in capsys.readouterr().err
    monkeypatch.setenv("LOBBYTALKS_WORKERS", "1")
    data.mkdir()
    (data / "secret.key").write_text("not a key\n")
    assert run("config", "--data-dir", str(data)) == 1
    assert "secret.key" in capsys.readouterr().err
    (data / "secret.key").unlink()  # no key yet is fine: serve makes one
    assert run("config", "--data-dir", str(data)) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("raw,shown", [
    ("redis://:pw@h:6379", "redis://:****@h:6379"),
    ("rediss://user:pw@h/0", "rediss://user:****@h/0"),
    ("postgresql://me:p%40ss@db.example/x?sslmode=require", "postgresql://me:****@db.example/x?sslmode=require"),
    ("memcached://sometoken@h", "memcached://****@h"),
    ("redis+sentinel://h:26379/m?password=pw&db=1", "redis+sentinel://h:26379/m?password=****&db=1"),
    ("memory://", "memory://"),
    ("https://example.org/a@b", "https://example.org/a@b"),  # an @ in the path is no userinfo
    ("plain", "plain"),
    ("postgresql://lt:Zq7pw/lt", "postgresql://lt:****/lt"),  # "@host" forgotten
    ("postgresql://db:5432/x", "postgresql://db:5432/x"),  # a port is no password
    # a username alone is no secret on PostgreSQL: the name was masked wherever it stood
    ("postgresql://postgres@db/postgres", "postgresql://****@db/postgres"),
    ("postgresql://u:p@h/db?sslpassword=s3cret&sslmode=require",
     "postgresql://u:****@h/db?sslpassword=****&sslmode=require"),
    # unescaped "@" and "/" in a password: the rest of it was shown after the first "@"
    ("postgresql://lt:p@ss/w0rd@db:5432/x", "postgresql://lt:****@db:5432/x"),
])
def test_mask_uri_credentials(raw, shown):
    assert mask_uri_credentials(raw) == shown


@pytest.mark.parametrize("url, secret", [
    ("postgresql://lt:My%Secret%Pass@127.0.0.1:1/lt2", "Secret"),     # not percent-decodable
    ("postgresql://lt:pwSEKRIT@[::1/lt2", "SEKRIT"),                  # a bracket left open
    (" postgresql://lt:DbSecret4@127.0.0.1:1/lt1", "DbSecret4"),      # a space before it
    ("JustThePassword", "JustThePassword"),                           # the password alone
    ("Zq7pass:word", "Zq7pass"),                          # ... with a colon, read as a scheme
    ("postgresql://lt:Zq7%2", "Zq7"),                                 # no "@host" at all
    ("postgresql://lt:Zq7pw/lt", "Zq7pw"),
    ("postgresql://lt@127.0.0.1:1/x?sslpassword=Zq7ssl&sslmode=bogus", "Zq7ssl"),
])
def test_a_malformed_database_url_is_refused_without_its_password(tmp_path, url, secret):
    """The refusal quoted the value, or the driver's words quoting it, password and all:
    into a service's log, from every command that reads it."""
    data = tmp_path / "d"
    assert run("init", "--data-dir", str(data)) == 0  # a database for migrate-db to copy
    secret_file = tmp_path / "url"
    secret_file.write_text(url + "\n")
    by_url, by_file = {"LOBBYTALKS_DATABASE_URL": url}, {"LOBBYTALKS_DATABASE_URL_FILE": str(secret_file)}
    for env, command in ((by_url, ["check"]), (by_url, ["serve", "--port", "0"]),
                         (by_file, ["serve", "--port", "0"]), ({}, ["migrate-db", "--to", url])):
        done = subprocess.run([sys.executable, "-m", "lobbytalks", *command, "--data-dir", str(data)],
                              capture_output=True, text=True, timeout=60,
                              env={**os.environ, **env, "PYTHONPATH": str(Path(__file__).parent.parent)})
        said = done.stdout + done.stderr
        assert done.returncode != 0 and "lobbytalks: " in said, (command, said)
        assert secret not in said and "Traceback" not in said, (command, said)


def test_a_malformed_rate_storage_is_refused_without_its_password(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LOBBYTALKS_RATELIMIT_STORAGE", "redis//:RedisSecret8@h:6379/0")
    assert run("config", "--data-dir", str(tmp_path / "data")) == 2
    captured = capsys.readouterr()
    assert "RedisSecret8" not in captured.out + captured.err
    assert "LOBBYTALKS_RATELIMIT_STORAGE must be memory://, redis://" in captured.err
    monkeypatch.setenv("LOBBYTALKS_RATELIMIT_STORAGE", "JustThePassword")
    monkeypatch.setenv("LOBBYTALKS_DATABASE_URL", "AlsoThePassword")
    run("config", "--data-dir", str(tmp_path / "data"))
    captured = capsys.readouterr()
    assert "ThePassword" not in captured.out + captured.err


def test_a_direct_value_wins_over_its_file(tmp_path):
    secret = tmp_path / "pw"
    secret.write_text("from file, long enough")
    env = {"LOBBYTALKS_ADMIN_USERNAME": "boss", "LOBBYTALKS_ADMIN_PASSWORD": "direct, long enough",
           "LOBBYTALKS_ADMIN_PASSWORD_FILE": str(secret)}
    assert Settings.load(env=env).admin_password == "direct, long enough"
    # a non-secret setting has no _FILE form
    assert Settings.load(env={"LOBBYTALKS_HOST_FILE": str(secret)}).host == "127.0.0.1"


# --- serve stops cleanly on SIGTERM ------------------------------------------------------------

def test_serve_stops_cleanly_on_sigterm(tmp_path):
    server = LiveServer(tmp_path / "live")
    web_session(server)
    server.proc.send_signal(signal.SIGTERM)
    out, _ = server.proc.communicate(timeout=20)
    assert server.proc.returncode == 0, out
    assert "LobbyTalks stopped" in out and "Traceback" not in out
    db_path = server.data_dir / "lobbytalks.db"
    assert not serverlock.in_use(db_path)
    assert not db_path.with_name("lobbytalks.db-wal").exists()  # closed cleanly: checkpointed


@pytest.mark.parametrize("host, warned", [("0.0.0.0", True), ("127.0.0.1", False)])
def test_serve_on_an_open_address_without_a_public_url_says_so(tmp_path, host, warned):
    """Without LOBBYTALKS_PUBLIC_URL the Origin rule follows each request's Host header:
    fine on this machine alone, worth a warning where others can connect."""
    server = LiveServer(tmp_path / "data", env={"LOBBYTALKS_HOST": host})
    output = server.stop()
    assert ("LOBBYTALKS_PUBLIC_URL is not set" in output) is warned, output


@pytest.mark.sqlite_only
def test_a_backup_stopped_by_sigterm_leaves_no_partial_copy(app, tmp_path, monkeypatch):
    """Python's default for SIGTERM (and SIGHUP) ends the process on the spot: a backup or
    restore stopped halfway left its database-sized hidden copy behind."""
    from lobbytalks import ops
    copy = ops._copy

    def stopped_halfway(src, dest, *args, **kwargs):
        made = copy(src, dest, *args, **kwargs)
        os.kill(os.getpid(), signal.SIGTERM)  # as `kill` or `systemctl stop` would
        return made
    monkeypatch.setattr(ops, "_copy", stopped_halfway)
    before = signal.getsignal(signal.SIGTERM)
    dest = tmp_path / "backups" / "b.db"
    with pytest.raises(SystemExit) as stopped:
        main(["backup", "--db", str(app.config["LOBBYTALKS"].db.path), str(dest)])
    assert stopped.value.code == 128 + signal.SIGTERM
    assert list(dest.parent.iterdir()) == []  # neither the copy nor its hidden draft
    assert signal.getsignal(signal.SIGTERM) == before  # the caller's handler is back


def test_a_start_refused_by_the_database_names_it(tmp_path, monkeypatch, capsys):
    """A full disk under the data folder said only "lobbytalks: database or disk is full"."""
    import lobbytalks
    from lobbytalks.cli import server
    from lobbytalks.settings import Settings

    def full(settings):
        raise sqlite3.OperationalError("database or disk is full")
    monkeypatch.setattr(lobbytalks, "create_app", full)
    settings = Settings.load(env={}, data_dir=str(tmp_path / "data"))
    assert server._app_or_none(settings) is None
    assert capsys.readouterr().err == (
        f"lobbytalks: {settings.db_path}: database or disk is full\n")


@pytest.mark.sqlite_only
def test_admin_commands_change_no_schema_under_a_server_nor_make_a_database(app, data_dir,
                                                                           tmp_path, capsys):
    """`admin log` after an upgrade migrated the file an older server still served (init
    refuses that by its lock), and made a whole database in an empty file."""
    db_path = Path(data_dir) / "lobbytalks.db"
    app.config["LOBBYTALKS"].db.close()
    with sqlite3.connect(db_path) as conn:  # as an older server left it: 0028 not applied
        conn.execute("DELETE FROM schema_migrations WHERE version = :v", {"v": latest_version()})
    older = latest_version() - 1
    lock = serverlock.acquire(db_path)  # that older server, serving it
    try:
        assert run("admin", "log", "--data-dir", data_dir) == 1
        said = capsys.readouterr().err
        assert f"served by an older LobbyTalks (schema version {older})" in said, said
        assert run("check", "--data-dir", data_dir) == 0
        assert f"schema version: {older} " in capsys.readouterr().out
    finally:
        serverlock.release(lock)
    assert run("admin", "log", "--data-dir", data_dir) == 0  # nobody serving it: upgraded
    capsys.readouterr()
    lock = serverlock.acquire(db_path)  # the same version serving it: works while serving
    try:
        assert run("admin", "grant", "nobody_here", "--data-dir", data_dir) == 1
        assert "no user named 'nobody_here'" in capsys.readouterr().err
    finally:
        serverlock.release(lock)
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    assert run("admin", "log", "--db", str(empty)) == 1
    assert f"no LobbyTalks database in {empty}" in capsys.readouterr().err
    assert empty.read_bytes() == b""
