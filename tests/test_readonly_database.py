"""A SQLite file this user may read but not write is refused at start, naming the file,
instead of a server that passes its health check and fails every write.

The tests run as whichever user runs the suite (often root, whom no file mode stops), so the
file is made read-only the way SQLite sees it: opened with ``mode=ro``, which is what SQLite
falls back to, silently, when the operating system refuses it write access."""
from __future__ import annotations

import socket
import sqlite3

import pytest

from lobbytalks.cli import main
from lobbytalks.db import connect, sqlite as sqlite_db

pytestmark = pytest.mark.sqlite_only


def _read_only(path, **_) -> sqlite3.Connection:
    """``db.connect`` as SQLite gives it to a user who may only read: WAL set as connect
    sets it (nothing to write where it is set already)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode = WAL")
    return conn


@pytest.mark.parametrize("journal", ["wal", "delete"])
def test_a_read_only_file_is_named_and_a_writable_one_passes(tmp_path, monkeypatch, journal):
    """"delete": a database not yet in WAL mode, refused as connect sets it (admin commands
    on a read-only folder said only "attempt to write a readonly database")."""
    path = tmp_path / "lobbytalks.db"
    conn = connect(path)
    conn.execute(f"PRAGMA journal_mode = {journal}")
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    sqlite_db.open_writable(path).close()  # nothing to say
    monkeypatch.setattr(sqlite_db, "connect", _read_only)
    with pytest.raises(sqlite3.OperationalError) as refused:
        sqlite_db.open_writable(path)
    assert str(refused.value).startswith(f"cannot write the database {path} (attempt to write "
                                         "a readonly database): the user running lobbytalks")


@pytest.mark.parametrize("command", [["serve"], ["init"], ["admin", "log"]])
def test_serve_init_and_admin_refuse_a_database_they_cannot_write(tmp_path, monkeypatch, capsys,
                                                                  command):
    data_dir = tmp_path / "data"
    assert main(["init", "--data-dir", str(data_dir)]) == 0
    capsys.readouterr()
    monkeypatch.setattr(sqlite_db, "connect", _read_only)
    with socket.socket() as taken:  # were the database let through, serve would stop here
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = ["--port", str(taken.getsockname()[1])] if command == ["serve"] else []
        assert main([*command, *port, "--data-dir", str(data_dir)]) == 1
    err = capsys.readouterr().err
    assert f"cannot write the database {data_dir / 'lobbytalks.db'}" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
