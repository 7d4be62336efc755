"""The database seam: every statement the app runs is a named query with :name parameters,
written so that the same text can run on another engine, and the hot listings keep their
indexes."""
from __future__ import annotations

import ast
import re
import sqlite3
from pathlib import Path

import pytest

import lobbytalks
from conftest import Person, query_plan
from helpers import UNDO_0011
from lobbytalks import create_app
from lobbytalks.db import schema
from lobbytalks.db.queries import sql_dir
from lobbytalks.db import Q

PACKAGE = Path(lobbytalks.__file__).parent
# SQLite file tools (backup, check, checkpoints, key rotation) and the seam itself.
MAY_IMPORT_SQLITE3 = {"migrate_db.py", "db/errors.py", "db/schema.py", "db/sqlite.py", "ops.py", "dbfile.py", "dbswap.py", "checkpoint.py"}
# Queries that keep SQLite-only syntax (json_each, FTS5 MATCH, rowid); another engine
# overrides them by name.
SQLITE_ONLY = {
    "list_authors_of_messages", "list_messages_by_ids", "list_recent_answers_for_admin",
    "list_browse_newest_searching", "list_browse_most_answers_searching",
    "list_browse_recently_answered_searching", "list_community_topics_new_searching",
    "list_community_topics_old_searching", "list_community_topics_active_searching",
    "search_forget_topic", "search_index_topic", "list_topics_missing_from_search",
    "delete_sessions_beyond",
}


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "connector" not in p.parts)


def _statement(sql: str) -> str:
    """The executed statement, up to its closing semicolon."""
    return sql.split(";")[0]


def test_every_named_query_is_used_and_every_used_name_exists():
    # The seam itself (lobbytalks/db/) names Q's own methods, not queries.
    code = "\n".join(p.read_text("utf-8") for p in _modules() if "db" not in p.relative_to(PACKAGE).parts[:1])
    used = set(re.findall(r"\bQ\.([a-z_][a-z0-9_]*)", code))
    assert sorted(set(Q._sql) - used) == [], "named queries nothing runs"
    assert sorted(used - set(Q._sql)) == [], "Q.<name> without a query"


def test_queries_take_named_parameters_only():
    positional = [name for name, sql in Q._sql.items() if "?" in sql]
    assert positional == []
    assert all(re.fullmatch(r"[a-z_][a-z0-9_]*", p)
               for sql in Q._sql.values() for p in re.findall(r":([^\s,);]+)", _statement(sql)))


def test_no_comment_inside_an_executed_statement():
    commented = [name for name, sql in Q._sql.items() if "--" in _statement(sql)]
    assert commented == []


def test_queries_avoid_sqlite_only_syntax():
    sqlite_words = re.compile(r"INSERT\s+OR\s|COLLATE\s+NOCASE|LIMIT\s+-1|\"|\bjson_each\b"
                              r"|\bMATCH\b|\browid\b|\bGLOB\b|\bIFNULL\b", re.IGNORECASE)
    found = {name for name, sql in Q._sql.items() if sqlite_words.search(_statement(sql))}
    assert found == SQLITE_ONLY


def test_no_boolean_expression_is_returned_as_a_column():
    # "x = y AS flag" or "EXISTS (...) AS flag" is an integer in SQLite, a boolean elsewhere.
    bare = re.compile(r"(=\s*[:\w.]+|\)|IS NOT NULL|IS NULL)\s+AS\s+\w+", re.IGNORECASE)
    offenders = []
    for name, sql in Q._sql.items():
        for select_list in re.findall(r"SELECT(.*?)\bFROM\b", _statement(sql), re.S | re.I):
            cleaned = re.sub(r"CASE.*?END", "", select_list, flags=re.S | re.I)
            cleaned = re.sub(r"\b(COUNT|COALESCE|ROW_NUMBER|MAX|MIN)\s*\([^()]*\)(\s*OVER\s*\([^()]*\))?",
                             "", cleaned, flags=re.I)
            if bare.search(cleaned):
                offenders.append(name)
    assert offenders == []


def test_only_the_storage_tools_import_sqlite3():
    importers = set()
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if any(n.split(".")[0] == "sqlite3" for n in names):
                importers.add(str(path.relative_to(PACKAGE)))
    assert importers <= MAY_IMPORT_SQLITE3, importers - MAY_IMPORT_SQLITE3


def test_services_blueprints_and_the_app_run_named_queries_only():
    """``execute``/``one``/``all``/``value`` never get SQL text: a named query (or a variable
    holding one) is the only thing they are handed."""
    checked = [*PACKAGE.glob("services/*.py"), *PACKAGE.glob("blueprints/*.py"),
               PACKAGE / "__init__.py", PACKAGE / "mailer.py", PACKAGE / "auth.py"]
    inline = []
    for path in checked:
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in {"execute", "executemany", "one", "all", "value"} \
                    and node.args and isinstance(node.args[0], (ast.Constant, ast.JoinedStr, ast.BinOp)):
                inline.append(f"{path.name}:{node.lineno}")
    assert inline == []


def test_no_statement_written_elsewhere_is_taken_for_a_query_postgresql_overrides():
    """PostgreSQL's version of a named query is found by the query's text: a no-op lock
    written "SELECT 1" on SQLite made every "SELECT 1" sent on PostgreSQL (a health check,
    a pool's probe) take an advisory lock and answer nothing."""
    overridden = {getattr(Q, name).strip().rstrip(";") for name in Q.overridden("postgresql")}
    written = set()
    for path in [*PACKAGE.rglob("*.py"), *Path(__file__).parent.glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Call) and node.args \
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                written.add(node.args[0].value.strip().rstrip(";"))
    assert not overridden & written, sorted(overridden & written)


# The index tests read SQLite's EXPLAIN QUERY PLAN and SQLite's migration history: sqlite_only.
@pytest.mark.sqlite_only
@pytest.mark.parametrize("status, match", [(None, None), ("open", None), (None, '"备份"'),
                                           ("open", '"备份"')])
def test_a_community_listing_walks_the_community_index(conn, status, match):
    name = "list_community_topics_new" + ("" if match is None else "_searching")
    plan = query_plan(conn, name, {
        "viewer": 1, "community": "lobby", "status": status, "match": match,
        "limit": 21, "offset": 0})
    assert "USING INDEX topics_community_created" in plan and "TEMP B-TREE" not in plan, plan


@pytest.mark.sqlite_only
def test_the_tasks_page_walks_the_users_task_index(conn):
    params = {"user": 1, "topic": None, "profile": None, "state": None}
    plan = query_plan(conn, "list_managed_tasks", {**params, "limit": 21, "offset": 0})
    assert "USING INDEX tasks_user_created" in plan and "TEMP B-TREE" not in plan, plan
    counted = query_plan(conn, "count_managed_tasks", params)
    assert re.search(r"USING (COVERING )?INDEX tasks_user_", counted), counted


@pytest.mark.sqlite_only
@pytest.mark.parametrize("name", ["get_user_by_name", "get_person_by_name",
                                  "get_user_moderation_state"])
def test_a_username_lookup_uses_the_lower_case_index(conn, name):
    plan = query_plan(conn, name, {"username": "Alice"})
    assert "USING INDEX users_username" in plan, plan


@pytest.mark.sqlite_only
def test_the_admins_told_of_a_report_are_found_by_their_own_index(conn):
    plan = query_plan(conn, "list_admins_but", {"user": 1})
    # (a scan of the partial index: the admins' rows alone)
    assert re.fullmatch(r"SCAN users USING (COVERING )?INDEX users_admins", plan), plan


def test_usernames_stay_unique_regardless_of_case(app, db):
    Person(app, username="Alice_1").register()
    r = Person(app, username="aLICE_1").web_post("register", username="aLICE_1",
                                                 password="correct horse 1")
    assert r.status_code == 409 and r.get_json()["code"] == "invalid_request"
    assert [tuple(row) for row in db.all("SELECT username FROM users")] == [("Alice_1",)]
    login = app.test_client().post("/api/community", json={
        "action": "login", "username": "ALICE_1", "password": "correct horse 1"})
    assert login.status_code == 200, login.get_json()


@pytest.mark.sqlite_only
def test_a_database_from_before_the_lower_case_index_keeps_its_users(settings):
    """Migration 0010 on a database at version 9: the names are found in any case after it."""
    app = create_app(settings)
    Person(app, username="Bob_2").register()
    app.config["LOBBYTALKS"].db.close_thread_connection()
    # the listing view as version 9 had it (0010 rewrote it): an upgrade checks the schema
    # is what its version says before it builds on it
    [view_v9] = [statement for statement in schema.split_statements(
        (sql_dir("sqlite", "migrations") / "0006_search.sql").read_text("utf-8"))
        if "CREATE VIEW topic_listing" in statement]
    old = sqlite3.connect(settings.db_path)
    old.executescript("""
        DROP INDEX users_username;
        CREATE UNIQUE INDEX users_username ON users (username COLLATE NOCASE);
        DELETE FROM schema_migrations WHERE version >= 10;
    """ + UNDO_0011 + "DROP VIEW topic_listing;" + view_v9)
    old.close()
    again = create_app(settings)
    conn = sqlite3.connect(settings.db_path)
    (index,) = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'users_username'").fetchone()
    versions = [v for (v,) in conn.execute("SELECT version FROM schema_migrations")]
    conn.close()
    assert "lower(username)" in index and 10 in versions
    assert again.test_client().get("/u/BOB_2").status_code == 200
