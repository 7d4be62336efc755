"""Backup, restore, check and the upgrade path, on real database files (lobbytalks.ops)."""
from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from lobbytalks import create_app, db as dbmod, dbfile, ops, serverlock
from lobbytalks.db import Database, SchemaTooNew, connect, migrate, schema
from lobbytalks.services import accounts

from conftest import FAST_COST, Person

# Backups before migrating, schema versions and repairs of the SQLite file.
pytestmark = pytest.mark.sqlite_only


def rows(path: Path, sql: str, params: tuple = ()) -> list[tuple]:
    conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
    try:
        return [tuple(r) for r in conn.execute(sql, params)]
    finally:
        conn.close()


def usernames(path: Path) -> set[str]:
    return {r[0] for r in rows(path, "SELECT username FROM users")}


def new_db(path: Path) -> Database:
    conn = connect(path)
    migrate(conn, 0)
    conn.close()
    return Database(path)


# --- backup ------------------------------------------------------------------------------------

def test_backup_is_a_verified_single_file_owned_by_its_owner(app, tmp_path):
    Person(app, username="alice").register()
    src = app.config["LOBBYTALKS"].db.path
    dest = tmp_path / "out" / "b.db"
    result = ops.backup(src, dest)
    assert result.path == dest and result.version == dbmod.latest_version()
    assert result.size == dest.stat().st_size
    assert usernames(dest) == {"alice"}
    assert rows(dest, "PRAGMA journal_mode") == [("delete",)]  # no -wal needed to read it
    assert stat.S_IMODE(dest.stat().st_mode) == 0o600  # it holds password hashes
    assert sorted(p.name for p in dest.parent.iterdir()) == ["b.db"]  # no temp file left
    assert ops.check(dest).ok


def test_backup_refuses_to_overwrite_unless_forced(app, tmp_path):
    src = app.config["LOBBYTALKS"].db.path
    dest = tmp_path / "b.db"
    new_db(dest)  # an older backup
    before = dest.read_bytes()
    with pytest.raises(ops.OpsError, match="already exists"):
        ops.backup(src, dest)
    assert dest.read_bytes() == before
    Person(app, username="alice").register()
    ops.backup(src, dest, force=True)
    assert ops.check(dest).ok and usernames(dest) == {"alice"}


@pytest.mark.parametrize("content", [b"k1:" + b"A" * 43 + b"=\n", b"postgresql://u:pw@db/x",
                                     b"\xff\xfe not text"])
def test_force_replaces_an_older_backup_and_nothing_else(app, tmp_path, content):
    """A key file named by LOBBYTALKS_SECRET_KEY_FILE, another installation's secret.key, a
    setting's file: none is the installation's default key path, and --force wrote the
    backup over them (the key lost with it)."""
    src = app.config["LOBBYTALKS"].db.path
    dest = tmp_path / "keys" / "lobbytalks.key"
    dest.parent.mkdir()
    dest.write_bytes(content)
    with pytest.raises(ops.OpsError, match=f"^refusing to overwrite {dest}: it is not a SQLite"):
        ops.backup(src, dest, force=True)
    assert dest.read_bytes() == content
    assert sorted(p.name for p in dest.parent.iterdir()) == ["lobbytalks.key"]
    dest.write_bytes(b"")  # an empty file is nothing to lose
    ops.backup(src, dest, force=True)
    assert ops.check(dest).ok


@pytest.mark.parametrize("made", ["a pipe", "a link to a device"])
def test_force_replaces_no_device_or_pipe(app, tmp_path, made):
    """A device read as an empty file, and --force swapped it for the backup (as root,
    /dev/null became a file); a pipe's read waited for ever. Its key beside it alike."""
    Person(app, username="alice").register()
    data_dir = app.config["LOBBYTALKS"].settings.data_dir
    for name in ("b.db", "c.db.key"):
        path = tmp_path / name
        if made == "a pipe":
            os.mkfifo(path)
        else:
            path.symlink_to("/dev/null")
    for dest in ("b.db", "c.db"):
        cli = subprocess.run(
            [sys.executable, "-m", "lobbytalks", "backup", "--force", "--with-key",
             "--data-dir", data_dir, str(tmp_path / dest)],
            capture_output=True, text=True, timeout=60, cwd=Path(__file__).parent.parent)
        refused = tmp_path / ("b.db" if dest == "b.db" else "c.db.key")
        assert cli.returncode == 1, cli
        assert f"refusing to overwrite {refused}: it is not a regular file" in cli.stderr
        assert not (tmp_path / "c.db").exists()  # (refused before the backup was made)
    for name in ("b.db", "c.db.key"):
        path = tmp_path / name
        assert (stat.S_ISFIFO(path.lstat().st_mode) if made == "a pipe" else path.is_symlink())
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_folder_or_a_place_it_cannot_write_is_named_as_given(app, tmp_path, monkeypatch):
    """The folder was found only once the whole copy was made, and either failure named
    the hidden file being written (".b.db.1234.partial")."""
    src = app.config["LOBBYTALKS"].db.path
    folder = tmp_path / "backups"
    folder.mkdir()
    with pytest.raises(ops.OpsError, match=f"^{folder} is a folder; name the backup file"):
        ops.backup(src, folder, force=True)
    assert list(folder.iterdir()) == []

    def refused(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(path))
    monkeypatch.setattr(ops.os, "open", refused)
    dest = folder / "b.db"
    with pytest.raises(ops.OpsError) as failed:
        ops.backup(src, dest)
    assert str(failed.value) == f"cannot write the backup {dest}: Permission denied"
    assert list(folder.iterdir()) == []


def test_no_force_overwrites_a_database_being_served_or_with_a_wal(app, tmp_path):
    src = app.config["LOBBYTALKS"].db.path
    served = tmp_path / "staging.db"
    new_db(served)
    lock = serverlock.acquire(served)
    try:
        with pytest.raises(ops.OpsError, match="serving it"):
            ops.backup(src, served, force=True)
    finally:
        serverlock.release(lock)
    open_writer = sqlite3.connect(served)
    try:
        open_writer.execute("PRAGMA journal_mode=WAL")
        open_writer.execute("CREATE TABLE unsaved (x)")
        open_writer.commit()
        with pytest.raises(ops.OpsError, match="-wal holds writes"):
            ops.backup(src, served, force=True)
        assert rows(served, "SELECT name FROM sqlite_master WHERE name = 'unsaved'") == [
            ("unsaved",)]
    finally:
        open_writer.close()
    for sidecar in ("-wal", "-shm", ".lock"):  # another database's files, served or not
        beside = served.with_name(served.name + sidecar)
        beside.write_bytes(b"")
        with pytest.raises(ops.OpsError, match=f"it is the {sidecar} of the database"):
            ops.backup(src, beside, force=True)
        beside.unlink()
    ops.backup(src, served, force=True)  # closed cleanly, served by nobody: replaced
    assert ops.check(served).ok and not rows(served, "SELECT 1 FROM sqlite_master "
                                             "WHERE name = 'unsaved'")


def test_asking_whether_a_file_is_served_leaves_nothing_beside_it(tmp_path):
    """A lock file was created beside every backup asked about (and on a read-only mount
    the question failed)."""
    backup = tmp_path / "final.db"
    new_db(backup)
    assert serverlock.in_use(backup) is False
    assert not serverlock.lock_path(backup).exists()
    lock = serverlock.acquire(backup)
    try:
        assert serverlock.in_use(backup) is True
    finally:
        serverlock.release(lock)
    assert serverlock.in_use(backup) is False
    lock = serverlock.acquire(backup)  # and the question let go of nothing it did not take
    try:
        assert serverlock.in_use(backup) is True
    finally:
        serverlock.release(lock)


def test_backup_of_a_missing_database_fails_without_creating_it(tmp_path):
    with pytest.raises(ops.OpsError, match="no such database"):
        ops.backup(tmp_path / "none.db", tmp_path / "b.db")
    assert not (tmp_path / "none.db").exists() and not (tmp_path / "b.db").exists()


def test_backup_under_concurrent_writes_keeps_every_committed_row(tmp_path):
    """Writers commit between every backup step; the copy is one consistent snapshot that
    holds everything committed before it began."""
    path = tmp_path / "live.db"
    database = new_db(path)
    for i in range(300):  # enough pages that the copy takes many steps
        accounts.register(database, f"seed{i:04d}", "x" * 400, now=0, cost=FAST_COST)
    committed: list[int] = []
    progressed = threading.Condition()
    stop = threading.Event()

    def writer(n: int) -> None:
        i = 0
        while not stop.is_set():
            user_id = accounts.register(database, f"w{n}_{i}", "pw", now=0, cost=FAST_COST)
            with progressed:
                committed.append(user_id)
                progressed.notify_all()
            i += 1

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    steps: list[tuple[int, int]] = []

    def each_step(done: int, total: int) -> None:
        # let at least one more write commit before the next step is copied
        with progressed:
            seen = len(committed)
            progressed.wait_for(lambda: len(committed) > seen, timeout=10)
        steps.append((done, total))

    try:
        with progressed:
            progressed.wait_for(lambda: len(committed) >= 5, timeout=10)
            before = set(committed)
        ops.backup(path, tmp_path / "b.db", step_pages=2, progress=each_step)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert len(steps) > 10 and steps[-1][0] == steps[-1][1]
    assert len(committed) > len(before) + 10  # writes really happened during the copy
    ids = sorted(r[0] for r in rows(tmp_path / "b.db", "SELECT id FROM users"))
    assert before <= set(ids)
    assert ids == list(range(1, len(ids) + 1))  # a snapshot: a prefix of the commit order
    assert len(ids) < 300 + len(committed)  # and it did not chase the later writes
    assert ops.check(tmp_path / "b.db").ok


# --- check -------------------------------------------------------------------------------------

def test_check_reports_version_and_passes_a_fresh_database(app):
    report = ops.check(app.config["LOBBYTALKS"].db.path)
    assert report.ok and report.version == report.latest == dbmod.latest_version()
    assert "result: ok" in report.lines()


def test_check_of_a_file_it_may_only_read_leaves_nothing_beside_it(tmp_path, monkeypatch):
    """As another user than the file's owner, in a folder that user may not write: a WAL
    file no process has open is read without the -shm SQLite could not create there."""
    path = tmp_path / "lobbytalks.db"
    new_db(path)
    assert path.read_bytes()[18:20] == b"\x02\x02"  # WAL mode, read from the header
    before = sorted(p.name for p in tmp_path.iterdir())
    assert before == ["lobbytalks.db"]
    real_access = os.access

    def without_write_access(where, mode, **kwargs):  # root may write anything
        return False if mode & os.W_OK else real_access(where, mode, **kwargs)

    real_inspect = dbfile.inspect
    beside_while_reading = []

    def inspect(conn, where):
        report = real_inspect(conn, where)
        beside_while_reading.extend(sorted(p.name for p in tmp_path.iterdir()))
        return report

    monkeypatch.setattr(os, "access", without_write_access)
    monkeypatch.setattr("lobbytalks.dbfile.inspect", inspect)
    report = ops.check(path)
    assert report.ok and report.version == dbmod.latest_version()
    assert beside_while_reading == before  # no -shm: none could be made in a read-only folder
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_check_finds_a_broken_foreign_key(app):
    path = app.config["LOBBYTALKS"].db.path
    conn = sqlite3.connect(path)  # foreign keys off by default: the write goes through
    conn.execute("INSERT INTO sessions (digest, user_id, created, expires) VALUES ('d', 999, 0, 1)")
    conn.commit()
    conn.close()
    report = ops.check(path)
    assert not report.ok and report.integrity == ["ok"]
    assert len(report.foreign_key_problems) == 1 and "sessions" in report.foreign_key_problems[0]


def migrated_to(path: Path, version: int) -> None:
    """A database as a release at ``version`` left it: the shipped migrations up to there."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY,"
                 " name TEXT NOT NULL, applied INTEGER NOT NULL)")
    for number, name, sql in dbmod.migrations():
        if number <= version:
            for statement in schema.split_statements(sql):
                conn.execute(statement)
            conn.execute("INSERT INTO schema_migrations VALUES (?, ?, 0)", (number, name))
    conn.close()


def test_check_compares_the_schema_with_what_its_version_defines(app, tmp_path):
    report = ops.check(app.config["LOBBYTALKS"].db.path)
    assert not report.schema_problems and not report.unknown_objects
    assert f"schema: as version {report.version} defines it" in report.lines()
    older = tmp_path / "older.db"
    migrated_to(older, 13)
    report = ops.check(older)
    assert report.ok and report.version == 13 and not report.schema_problems
    assert "schema: as version 13 defines it" in report.lines()


def test_check_fails_a_database_whose_tables_are_not_what_its_version_says(tmp_path):
    """A development build's data folder at version 14 before 0014 gained
    ``notifications.cause``: every upgrade or take-down notice failed on it later."""
    path = tmp_path / "dev.db"
    migrated_to(path, 14)
    conn = sqlite3.connect(path)
    conn.executescript("ALTER TABLE notifications DROP COLUMN cause;"
                       " DROP INDEX tasks_profile_created;"
                       " CREATE INDEX my_own ON users (created);")
    conn.close()
    report = ops.check(path)
    assert report.integrity == ["ok"] and not report.foreign_key_problems and not report.ok
    assert report.schema_problems == ["index tasks_profile_created: missing",
                                      "table notifications: defined differently"]
    assert report.unknown_objects == ["index my_own: not part of LobbyTalks's schema (left alone)"]
    lines = report.lines()
    assert "schema: DIFFERS from what version 14 defines" in lines
    assert lines[-1] == "result: PROBLEMS FOUND"


@pytest.mark.parametrize("drift, named", [
    # 0014 before it gained notifications.cause: 0015 stopped at "no such column: cause"
    ("ALTER TABLE notifications DROP COLUMN cause", "table notifications: defined differently"),
    ("DROP INDEX tasks_profile_created", "index tasks_profile_created: missing"),
])
def test_an_upgrade_refuses_a_database_that_is_not_what_its_version_says(tmp_path, drift,
                                                                            named):
    """Not upgraded halfway to a bare SQL error, nor all the way to a write failing later
    (a 0015 of a development build kept an older CHECK: every take-down then failed 503)."""
    path = tmp_path / "dev.db"
    migrated_to(path, 14)
    conn = sqlite3.connect(path)
    conn.executescript(f"{drift}; CREATE INDEX my_own ON users (created);")
    before = conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
    conn.close()
    conn = connect(path)
    try:
        with pytest.raises(dbmod.MigrationFailed) as refused:
            migrate(conn, 0)
    finally:
        conn.close()
    message = str(refused.value)
    assert message.startswith("cannot upgrade: the database is not what schema version 14 "
                              f"defines ({named}), as after a development build")
    assert "`lobbytalks check` lists every difference" in message and "my_own" not in message
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone() == (14,)
    assert conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall() \
        == before
    conn.close()


@pytest.mark.parametrize("one, other, same", [
    # a table rebuilt under another name and renamed back: SQLite quotes the new name
    ("CREATE TABLE t (\n  a TEXT CHECK (a IN ('x', 'y')), -- why\n  b INTEGER)",
     "CREATE TABLE \"t\" (a TEXT CHECK (a IN ('x','y')),b INTEGER)", True),
    ("CREATE TABLE t (a TEXT , b INTEGER)", "create table T(A text,B integer)", True),
    # names quoted the ways SQLite takes (sqlite-utils writes brackets)
    ("CREATE INDEX i ON t (created DESC, id)", "CREATE INDEX [i] ON `t` ([created] DESC, \"id\")",
     True),
    ('CREATE TABLE t ("a b" TEXT)', "CREATE TABLE t ([a b] TEXT)", True),
    ("CREATE INDEX i ON t (a)", 'CREATE INDEX i ON[t]("a")', True),  # no space needed there
    ("CREATE TABLE t ([a -- b] TEXT, c TEXT)", "CREATE TABLE t ([a -- b] TEXT)", False),
    # what SQLite reads differently: a literal's case or spaces, a name that needs quotes
    ("CREATE TABLE t (a TEXT CHECK (a IN ('leased')))",
     "CREATE TABLE t (a TEXT CHECK (a IN ('LEASED')))", False),
    ("CREATE TABLE t (a TEXT DEFAULT 'self-reported')",
     "CREATE TABLE t (a TEXT DEFAULT 'Self - Reported')", False),
    ("CREATE TABLE t (reasoning_summary TEXT)", 'CREATE TABLE t ("Reasoning_ Summary" TEXT)', False),
    ("CREATE TABLE t (a TEXT DEFAULT 'x -- y')", "CREATE TABLE t (a TEXT DEFAULT 'x')", False),
])
def test_the_schema_comparison_reads_statements_as_sqlite_does(one, other, same):
    """Folding case and spaces everywhere hid a CHECK list in capitals and a column renamed
    by quoting (every claim then failed 503), while the same table reached by another path
    must read alike."""
    differences = schema.schema_differences({("table", "t"): schema._canonical(one)},
                                            {("table", "t"): schema._canonical(other)})
    assert differences == ([] if same else ["table t: defined differently"])


def test_an_older_database_as_its_version_defines_it_upgrades(tmp_path):
    path = tmp_path / "older.db"
    migrated_to(path, 14)
    sqlite3.connect(path).execute("CREATE INDEX my_own ON users (created)").connection.close()
    conn = connect(path)
    try:
        assert migrate(conn, 0) == [n for n, _, _ in dbmod.migrations() if n > 14]
    finally:
        conn.close()
    assert ops.check(path).ok


def test_an_index_of_the_admins_own_is_reported_but_not_a_failure(app):
    path = app.config["LOBBYTALKS"].db.path
    conn = sqlite3.connect(path)
    conn.execute("CREATE INDEX my_own ON users (created)")
    conn.close()
    report = ops.check(path)
    assert report.ok and report.unknown_objects == [
        "index my_own: not part of LobbyTalks's schema (left alone)"]
    assert "  index my_own: not part of LobbyTalks's schema (left alone)" in report.lines()


def test_check_finds_corruption(app, tmp_path):
    Person(app, username="alice").register()
    copy = tmp_path / "c.db"
    ops.backup(app.config["LOBBYTALKS"].db.path, copy)
    ((root,),) = rows(copy, "SELECT rootpage FROM sqlite_master WHERE name = 'users_username'")
    data = bytearray(copy.read_bytes())
    header = (root - 1) * 4096
    data[header + 3:header + 5] = b"\x01\x00"  # the index page now claims 256 cells
    copy.write_bytes(bytes(data))
    report = ops.check(copy)
    assert not report.ok and report.integrity != ["ok"]
    assert "integrity_check: FAILED" in report.lines()
    assert len(report.lines()) < 40  # a long list of problems is cut short


def test_check_rejects_a_file_that_is_not_a_database(tmp_path):
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not sqlite at all" * 200)
    with pytest.raises(ops.OpsError, match="not a readable SQLite database"):
        ops.check(junk)


def test_check_fails_a_sqlite_file_that_holds_no_lobbytalks_schema(tmp_path):
    """Used to vet a file before restoring it: someone else's database is not "ok"."""
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
    conn.commit()
    conn.close()
    report = ops.check(other)
    assert report.version == 0 and report.integrity == ["ok"] and not report.ok
    assert "NO LobbyTalks schema" in "\n".join(report.lines())
    assert report.lines()[-1] == "result: PROBLEMS FOUND"


# --- restore -----------------------------------------------------------------------------------

def test_restore_replaces_the_database_keeps_the_old_one_and_ends_sessions(app, tmp_path):
    rt = app.config["LOBBYTALKS"]
    path = Path(rt.db.path)
    alice = Person(app, username="alice").register()
    backup = tmp_path / "b.db"
    ops.backup(path, backup)
    Person(app, username="bob").register()  # after the backup: gone after restore
    assert rows(path, "SELECT COUNT(*) FROM sessions") == [(2,)]
    rt.db.close_thread_connection()
    # a crashed server leaves sidecars: a -wal holding its last commits and a -shm; they
    # belong to the old file, not the restored one
    crashed = subprocess.run([sys.executable, "-c", (
        "import os, sqlite3, sys; conn = sqlite3.connect(sys.argv[1]);"
        "conn.execute('PRAGMA wal_autocheckpoint = 0'); conn.execute('CREATE TABLE scratch (x)');"
        "conn.commit(); os._exit(0)"), str(path)], timeout=60)
    assert crashed.returncode == 0 and (path.parent / (path.name + "-wal")).stat().st_size > 0

    result = ops.restore(path, backup, now=1_800_000_000)
    assert result.sessions_ended == 1 and result.version == result.latest
    assert result.previous == path.with_name("lobbytalks.db.before-restore-20270115T080000Z")
    assert usernames(path) == {"alice"}
    assert rows(path, "SELECT COUNT(*) FROM sessions") == [(0,)]
    assert usernames(result.previous) == {"alice", "bob"}
    assert rows(result.previous, "SELECT name FROM sqlite_master WHERE name = 'scratch'") \
        == [("scratch",)]  # what the crashed server's -wal held is kept with it
    assert not (path.parent / (path.name + "-shm")).exists()
    assert not (path.parent / (path.name + "-wal")).exists()
    assert ops.check(path).ok
    # the restored app serves: alice's old cookie is dead, her password still works
    fresh = create_app(rt.settings)
    alice.app = fresh
    assert alice.web_get(action="me").get_json().get("user") is None
    assert alice.web_post("login", username="alice",
                          password=alice.password).status_code == 200


def test_restore_through_a_symbolic_link_replaces_the_file_it_leads_to(app, tmp_path):
    """The link was set aside and a new file put in its place: the server, naming the real
    file, went on with the old data, restore said it had succeeded."""
    rt = app.config["LOBBYTALKS"]
    path = Path(rt.db.path)
    backup = tmp_path / "b.db"
    ops.backup(path, backup)
    Person(app, username="after_backup").register()
    rt.db.close_thread_connection()
    link = tmp_path / "link.db"
    link.symlink_to(path)
    result = ops.restore(link, backup, now=1_800_000_000)
    assert link.is_symlink() and link.resolve() == path.resolve()
    assert "after_backup" not in usernames(path)
    assert result.previous.parent == path.parent


def test_restore_refuses_a_database_being_served(app, tmp_path):
    path = Path(app.config["LOBBYTALKS"].db.path)
    backup = tmp_path / "b.db"
    ops.backup(path, backup)
    before = path.read_bytes()
    lock = serverlock.acquire(path)  # what `lobbytalks serve` holds while it runs
    try:
        with pytest.raises(ops.OpsError, match="already being served"):
            ops.restore(path, backup, now=0)
    finally:
        serverlock.release(lock)
    assert path.read_bytes() == before
    assert not list(path.parent.glob("*.before-restore-*"))


def test_restore_refuses_corrupt_and_too_new_files(app, tmp_path):
    path = Path(app.config["LOBBYTALKS"].db.path)
    Person(app, username="alice").register()
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"\0" * 8192)
    with pytest.raises(ops.OpsError):
        ops.restore(path, junk, now=0)
    newer = tmp_path / "newer.db"
    ops.backup(path, newer)
    conn = sqlite3.connect(newer)
    conn.execute("INSERT INTO schema_migrations VALUES (99, 'future', 0)")
    conn.commit()
    conn.close()
    with pytest.raises(ops.OpsError, match="schema version 99, newer than this"):
        ops.restore(path, newer, now=0)
    assert usernames(path) == {"alice"}
    assert not list(path.parent.glob("*.before-restore-*"))


def test_restore_refuses_a_folder_for_a_database_and_a_backup_it_could_not_upgrade(
        app, tmp_path):
    """A folder named as the database was set aside and a file put in its place; a backup of
    a development build's database was restored with the promise of an upgrade the next
    start then refused."""
    Person(app, username="alice").register()
    backup = tmp_path / "b.db"
    ops.backup(app.config["LOBBYTALKS"].db.path, backup)
    folder = tmp_path / "folder.db"
    folder.mkdir()
    with pytest.raises(ops.OpsError, match="is a folder, not a database file"):
        ops.restore(folder, backup, now=0)
    assert folder.is_dir() and not list(tmp_path.glob("folder.db.before-restore-*"))
    with pytest.raises(ops.OpsError, match="a folder, not a database file"):
        ops.check(folder)
    drifted = tmp_path / "dev.db"
    migrated_to(drifted, 14)
    sqlite3.connect(drifted).execute("ALTER TABLE notifications DROP COLUMN cause").connection.close()
    target = tmp_path / "restored.db"
    with pytest.raises(ops.OpsError, match=r"not what schema version 14 defines \(table "
                                           r"notifications: defined differently\), so the "
                                           r"next start could not upgrade it"):
        ops.restore(target, drifted, now=0)
    assert not target.exists()
    older = tmp_path / "older.db"
    migrated_to(older, 14)
    assert ops.restore(target, older, now=0).version == 14  # as its version defines it


def test_restore_into_an_empty_folder_drops_an_orphan_wal(tmp_path, app):
    backup = tmp_path / "b.db"
    Person(app, username="alice").register()
    ops.backup(app.config["LOBBYTALKS"].db.path, backup)
    target = tmp_path / "new" / "lobbytalks.db"
    target.parent.mkdir()
    (target.parent / "lobbytalks.db-wal").write_bytes(b"stale" * 100)
    result = ops.restore(target, backup, now=0)
    assert result.previous is None and usernames(target) == {"alice"}
    assert not (target.parent / "lobbytalks.db-wal").exists()


# --- the key -----------------------------------------------------------------------------------

def test_key_export_install_and_check(app, tmp_path, make_person):
    rt = app.config["LOBBYTALKS"]
    path, key_path = Path(rt.db.path), rt.settings.secret_key_path
    asker = make_person()
    asker.join()
    asker.ask(privateContext="内部数据库路径 /srv/db，请勿外传")
    assert ops.check_key(path, "", key_path).matches is True

    exported = tmp_path / "b.db.key"
    fingerprint = ops.export_key("", key_path, exported)
    assert fingerprint == rt.keyring.fingerprint()
    assert stat.S_IMODE(exported.stat().st_mode) == 0o600
    assert exported.read_text() == key_path.read_text()
    with pytest.raises(ops.OpsError, match="already exists"):
        ops.export_key("", key_path, exported)

    key_path.unlink()  # the key is lost: the check says so instead of failing later
    missing = ops.check_key(path, "", key_path)
    assert missing.matches is False and "no secret key" in missing.message
    other = tmp_path / "other.key"
    other.write_text("k1:" + "A" * 43 + "=\n")
    assert ops.install_key(other, key_path, now=0) is None
    wrong = ops.check_key(path, "", key_path)
    assert wrong.matches is False and "does not match" in wrong.message
    kept = ops.install_key(exported, key_path, now=0)
    assert kept == key_path.with_name("secret.key.before-restore-19700101T000000Z")
    assert ops.check_key(path, "", key_path).matches is True
    # a second restore in the same second kept its key under the same name, over the
    # first one's: the installation's key before both was lost
    again = ops.install_key(other, key_path, now=0)
    assert again == key_path.with_name("secret.key.before-restore-19700101T000000Z-2")
    assert kept.read_text().endswith("k1:" + "A" * 43 + "=\n")
    assert again.read_text() == exported.read_text()


def test_check_key_needs_no_key_without_private_context(app):
    rt = app.config["LOBBYTALKS"]
    status = ops.check_key(Path(rt.db.path), "", rt.settings.secret_key_path)
    assert status.matches is None and "no private context" in status.message


# --- upgrades ----------------------------------------------------------------------------------

FUTURE_SQL = "CREATE TABLE future_things (id INTEGER PRIMARY KEY, note TEXT NOT NULL);\n"


CURRENT = dbmod.latest_version()
FUTURE = CURRENT + 1


@pytest.fixture
def future_migration(monkeypatch):
    """This build pretends to ship one more migration on top of the real ones."""
    real = dbmod.migrations

    def with_future(sql: str = FUTURE_SQL):
        # db.schema is where the migration functions look the list up.
        monkeypatch.setattr(dbmod.schema, "migrations",
                            lambda dialect="sqlite": real(dialect) + [(FUTURE, "future", sql)])
        monkeypatch.setattr(dbmod, "migrations", dbmod.schema.migrations)
    return with_future


def test_upgrade_backs_up_then_migrates_in_one_go(settings, future_migration):
    app = create_app(settings)
    Person(app, username="alice").register()
    app.config["LOBBYTALKS"].db.close_thread_connection()
    future_migration()

    upgraded = create_app(settings)
    path = Path(settings.db_path)
    (copy,) = path.parent.glob(f"lobbytalks.db.pre-migrate-v{CURRENT}-*.bak")
    assert rows(copy, "SELECT MAX(version) FROM schema_migrations") == [(CURRENT,)]
    assert usernames(copy) == {"alice"} and ops.check(copy).ok
    assert rows(path, "SELECT version, name FROM schema_migrations ORDER BY version")[-2:] == \
        [(CURRENT, dbmod.migrations()[-2][1]), (FUTURE, "future")]
    assert rows(path, "SELECT COUNT(*) FROM future_things") == [(0,)]
    assert upgraded.test_client().get("/healthz").get_json() == {"ok": True}
    create_app(settings)  # nothing pending: no second copy
    assert len(list(path.parent.glob("*.pre-migrate-*"))) == 1


def test_a_failing_upgrade_leaves_the_database_as_it_was(settings, future_migration):
    app = create_app(settings)
    Person(app, username="alice").register()
    app.config["LOBBYTALKS"].db.close_thread_connection()
    future_migration("CREATE TABLE fine (x);\nCREATE TABLE users (clash);\n")
    for _attempt in range(2):  # a service manager restarting the server tries again
        with pytest.raises(dbmod.MigrationFailed,
                           match=f"migration {FUTURE:04d}_future failed: table users already "
                                 "exists; the upgrade was rolled back"):
            create_app(settings)
    path = Path(settings.db_path)
    assert rows(path, "SELECT MAX(version) FROM schema_migrations") == [(CURRENT,)]
    assert rows(path, "SELECT name FROM sqlite_master WHERE name = 'fine'") == []
    assert usernames(path) == {"alice"}
    # the copy taken before each try is the database as it still is: not kept, one per try
    assert list(path.parent.glob("*.pre-migrate-*")) == []


def test_an_upgrade_that_would_orphan_rows_is_refused_the_same_way(settings, future_migration):
    """Its check before COMMIT raised a plain error: the copy stayed at every restart and
    no migration was named."""
    app = create_app(settings)
    Person(app, username="alice").register().new_agent()  # a token row points at its agent
    app.config["LOBBYTALKS"].db.close_thread_connection()
    future_migration("CREATE TABLE profiles_new (id TEXT PRIMARY KEY);\n"
                     "DROP TABLE profiles;\nALTER TABLE profiles_new RENAME TO profiles;\n")
    for _attempt in range(2):
        with pytest.raises(dbmod.MigrationFailed,
                           match=f"the upgrade to schema version {FUTURE} failed: .*pointing "
                                 "at nothing; the upgrade was rolled back"):
            create_app(settings)
    path = Path(settings.db_path)
    assert usernames(path) == {"alice"}
    assert list(path.parent.glob("*.pre-migrate-*")) == []


def test_a_new_database_is_not_backed_up(settings, future_migration):
    future_migration()
    create_app(settings)
    path = Path(settings.db_path)
    assert rows(path, "SELECT MAX(version) FROM schema_migrations") == [(FUTURE,)]
    assert not list(path.parent.glob("*.pre-migrate-*"))


def test_a_database_from_a_newer_version_is_refused_untouched(settings):
    create_app(settings).config["LOBBYTALKS"].db.close_thread_connection()
    path = Path(settings.db_path)
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO schema_migrations VALUES (?, 'from_the_future', 0)", (FUTURE,))
    conn.commit()
    conn.close()
    with pytest.raises(SchemaTooNew, match=f"schema version {FUTURE}, newer than this LobbyTalks"):
        create_app(settings)
    assert rows(path, "SELECT MAX(version) FROM schema_migrations") == [(FUTURE,)]
    assert not list(path.parent.glob("*.pre-migrate-*"))
    report = ops.check(path)
    assert report.too_new and not report.ok
    assert any("NEWER than this LobbyTalks" in line for line in report.lines())
    assert os.path.exists(path)


def test_two_restores_in_one_second_keep_both_previous_files(app, tmp_path):
    path = Path(app.config["LOBBYTALKS"].db.path)
    backup = tmp_path / "b.db"
    ops.backup(path, backup)
    first = ops.restore(path, backup, now=0).previous
    second = ops.restore(path, backup, now=0).previous
    assert first.name == "lobbytalks.db.before-restore-19700101T000000Z"
    assert second.name == "lobbytalks.db.before-restore-19700101T000000Z-2"
    assert first.exists() and second.exists()


def test_a_restore_killed_before_its_last_rename_leaves_the_old_database_in_place(
        app, tmp_path, monkeypatch):
    """The old file was renamed aside first and the copy renamed in after: killed in
    between, the folder held no database, and the next `serve` made an empty one."""
    path = Path(app.config["LOBBYTALKS"].db.path)
    Person(app, username="alice").register()
    backup = tmp_path / "b.db"
    ops.backup(path, backup)
    Person(app, username="bob").register()
    app.config["LOBBYTALKS"].db.close_thread_connection()
    plain = os.replace

    def killed_at_the_swap(src, dst, *args, **kwargs):
        if Path(dst) == path and str(src).endswith(".restoring"):
            raise KeyboardInterrupt  # what a kill there leaves, without the process ending
        return plain(src, dst, *args, **kwargs)
    monkeypatch.setattr(os, "replace", killed_at_the_swap)
    with pytest.raises(KeyboardInterrupt):
        ops.restore(path, backup, now=0)
    monkeypatch.undo()
    assert usernames(path) == {"alice", "bob"} and ops.check(path).ok
    assert [p.name for p in path.parent.iterdir() if ".restoring" in p.name] == []


def _ended_pid() -> int:
    """The id of a process that has ended."""
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, timeout=60)
    return int(child.stdout)


def test_copies_left_by_killed_runs_are_removed_by_the_next(app, tmp_path):
    """A backup or restore killed outright left its database-sized hidden copy for good:
    the next runs named theirs by their own process id and left the others alone."""
    path = Path(app.config["LOBBYTALKS"].db.path)
    dest = tmp_path / "b.db"
    dead, alive = _ended_pid(), os.getppid()
    left = [tmp_path / f".b.db.{dead}.partial", tmp_path / f".b.db.{dead}.partial-journal",
            path.with_name(f".lobbytalks.db.{dead}.restoring"),
            path.with_name(f".lobbytalks.db.{dead}.restoring-journal")]
    running = [tmp_path / f".b.db.{alive}.partial",
               path.with_name(f".lobbytalks.db.{alive}.restoring"),
               tmp_path / f".other.db.{dead}.partial"]  # another backup's name
    for file in left + running:
        file.write_bytes(b"x" * 4096)
    ops.backup(path, dest)
    ops.restore(path, dest, now=0)
    assert [file for file in left if file.exists()] == []
    assert all(file.exists() for file in running)


def test_a_database_it_may_not_read_is_one_line(app, tmp_path, monkeypatch):
    """`check`, `backup` and `restore` of a file the user may not read ended in a traceback
    (the read-only fallback's error was not caught)."""
    path = Path(app.config["LOBBYTALKS"].db.path)

    def unreadable(*args, **kwargs):
        raise sqlite3.OperationalError("unable to open database file")
    monkeypatch.setattr(dbfile.sqlite3, "connect", unreadable)
    for attempt in (lambda: ops.check(path), lambda: ops.backup(path, tmp_path / "b.db")):
        with pytest.raises(ops.OpsError, match=(
                f"^cannot read the database {path} \\(unable to open database file\\): the "
                f"user running lobbytalks \\(uid {os.getuid()}\\) needs read access to it$")):
            attempt()
    assert list(tmp_path.glob("*b.db*")) == []


def test_a_full_disk_under_the_backup_is_said_of_the_backup(app, tmp_path, monkeypatch):
    """It said "backup of <the database> failed: database or disk is full": the source,
    whose disk was fine."""
    full = sqlite3.OperationalError("database or disk is full")
    full.sqlite_errorcode = sqlite3.SQLITE_FULL

    def copy_until_full(*args, **kwargs):
        raise full
    monkeypatch.setattr(ops, "_copy", copy_until_full)
    dest = tmp_path / "b.db"
    with pytest.raises(ops.OpsError) as failed:
        ops.backup(app.config["LOBBYTALKS"].db.path, dest)
    assert str(failed.value) == f"cannot write the backup {dest}: database or disk is full"
