"""Administration: the admin role and its audit log, the configuration, the secret key."""
from __future__ import annotations

import argparse
from pathlib import Path

from .registry import add_db_options, command, fail, open_postgres, settings_from


CHANGES = {
    "grant": "give USERNAME the admin role",
    "revoke": "take the admin role from USERNAME",
    "reset-password": "give USERNAME a new password (generated and printed, or read from "
                      "standard input) and end all their logins",
    "delete-user": "delete USERNAME's account as its owner could under Settings (for someone "
                   "who can no longer log in): renamed, emptied, every login and token ended",
    "log": "print the newest entries of the admin audit log, oldest first",
}


def _admin_setup(p: argparse.ArgumentParser) -> None:
    # One parser per change, each with its own arguments, so that an option may stand
    # anywhere after the change ("admin grant --data-dir D bob"): one parser with an
    # optional USERNAME let argparse take "grant" alone and refuse "bob".
    changes = p.add_subparsers(dest="change", required=True, metavar="CHANGE")
    for name, help in CHANGES.items():
        change = changes.add_parser(name, help=help, description=help)
        if name == "log":
            change.add_argument("--limit", type=int, default=50, metavar="N",
                                help="how many of the newest entries to print (default 50)")
        else:
            change.add_argument("username", help="the user to change")
        if name == "reset-password":
            change.add_argument("--password-stdin", action="store_true",
                                help="read the new password from the first line of standard "
                                     "input instead of generating one")
        add_db_options(change, default=argparse.SUPPRESS)  # the one given to admin stands


@command("admin", "grant or revoke the admin role (admin grant|revoke USERNAME), give a "
                  "person who forgot theirs a new password (admin reset-password USERNAME), "
                  "delete an account (admin delete-user USERNAME), or print the audit log of "
                  "admin actions (admin log [--limit N])",
         setup=_admin_setup)
def admin(args: argparse.Namespace) -> int:
    from .. import ops
    from ..db import DatabaseError, SchemaTooNew
    from ..services import audit
    from ..password_rules import too_easy
    from ..passwords import PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH
    from ..startup import open_migrated

    settings = settings_from(args)
    refused = _refusal(args, settings)
    if refused:
        return fail(refused)
    from_stdin = getattr(args, "password_stdin", False)
    password = _new_password(from_stdin) if args.change == "reset-password" else ""
    if password is None:
        return fail(f"the password must be {PASSWORD_MIN_LENGTH}–{PASSWORD_MAX_LENGTH} characters")
    if from_stdin and too_easy(password, args.username):
        return fail("that password is too easy to guess (a common word with digits, a run "
                    "such as 1234567890, or mostly the username); choose another")
    try:
        db = open_migrated(settings, existing=True)
    except (SchemaTooNew, ops.OpsError, DatabaseError) as exc:
        return fail(str(exc))
    try:
        if args.change == "log":
            print_audit_log(audit.recent(db, args.limit))
            return 0
        found, done = _change(args, db, settings, password, from_stdin)
    finally:
        db.close()
    if not found:
        return fail(f"no user named {args.username!r}" if done is None else done)
    print(f"{args.username}: {done}")
    return 0


def _change(args: argparse.Namespace, db, settings, password: str,
            from_stdin: bool) -> tuple[bool, str | None]:
    """(whether the account was found, what was done or why not: None for no account)."""
    from .. import clock
    from ..errors import ApiError
    from ..services import account_deletion, accounts

    if args.change == "reset-password":
        found = accounts.reset_password(db, args.username, password,
                                        cost=settings.password_cost, now=clock.now())
        if not found:  # (never a password printed for no one)
            return False, None
        told = "" if from_stdin else f"; the new password is {password}"
        return True, (f"password reset, logged out everywhere{told} (they can change it "
                      "under Settings once logged in)")
    if args.change == "delete-user":
        try:
            name = account_deletion.delete_by_name(db, args.username, now=clock.now())
        except ApiError:  # the one refusal: an admin
            return False, f"{args.username} is an admin: revoke the role first (admin revoke)"
        return name is not None, f"account deleted, now named {name}" if name else None
    changed = accounts.change_admin(db, args.username, args.change == "grant", now=clock.now())
    if changed is None:
        return False, None
    return True, (
        f"admin {'granted' if args.change == 'grant' else 'revoked'}" if changed
        else f"{'already' if args.change == 'grant' else 'not'} an admin, nothing changed")


def _refusal(args: argparse.Namespace, settings) -> str | None:
    """Why the command cannot run as asked, before a password is read or the database
    opened."""
    if args.db and args.data_dir:  # one before the change, one after: both were taken
        return "give --db or --data-dir, not both"
    if args.change == "log" and not 1 <= args.limit <= 10000:
        return "--limit must be between 1 and 10000"
    # names are one account whatever their case (users_username is on lower(username))
    if args.change == "revoke" and args.username.lower() == settings.admin_username.lower():
        return (f"{args.username} is LOBBYTALKS_ADMIN_USERNAME, made an admin at every start: "
                "the next start would refuse to run; change or unset that setting first")
    if not settings.uses_postgres and not Path(settings.db_path).exists():
        return f"no database at {settings.db_path} (lobbytalks init creates one)"
    if not settings.uses_postgres and Path(settings.db_path).stat().st_size == 0:
        # (refused before it is opened: opening it would write a header into it)
        return f"no LobbyTalks database in {settings.db_path} (lobbytalks init creates one)"
    return None


def _new_password(from_stdin: bool) -> str | None:
    """The first line of standard input (checked by the registration rule), or a new
    random password: 16 characters from 96 random bits."""
    import secrets
    import sys

    from pydantic import TypeAdapter, ValidationError

    from ..models.web import Password

    if not from_stdin:
        return secrets.token_urlsafe(12)
    line = sys.stdin.readline().rstrip("\r\n")
    try:
        return TypeAdapter(Password).validate_python(line)
    except ValidationError:
        return None


def print_audit_log(entries: list[dict]) -> None:
    """One tab-separated line per entry, oldest first so the newest ends up at the prompt."""
    from datetime import datetime, timezone

    if not entries:
        print("(no admin actions recorded)")
    for e in reversed(entries):
        when = datetime.fromtimestamp(e["created"], tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ")
        print("\t".join((when, e["actor"] or "(command line)", e["action"],
                         f"{e['target_kind']}:{e['target_id']}", e["reason"])))


@command("config", "print the effective configuration (secrets masked)")
def config(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    for name, value, help_text in settings.describe():
        print(f"{name}={value}    # {help_text}")
    problems = _start_problems(settings)
    for problem in problems:
        fail(problem)
    return 1 if problems else 0


def _start_problems(settings) -> list[str]:
    """What would stop ``serve`` with these settings before it touches the database: the
    number of processes and a secret key that is there but malformed."""
    from .. import crypto, keystore, workers

    problems = [workers.refusal(settings)]
    if settings.secret_key.strip() or settings.secret_key_path.exists():
        try:
            keystore.load_keyring(env_value=settings.secret_key,
                                  key_path=settings.secret_key_path, create=False,
                                  env_name=settings.secret_key_source)
        except crypto.SecretKeyProblem as exc:
            problems.append(str(exc))
    return [problem for problem in problems if problem]


@command("rotate-key", "re-encrypt private question context under a new secret key")
def rotate_key(args: argparse.Namespace) -> int:

    from .. import crypto, key_rotation, keystore, serverlock
    from ..db import DatabaseError

    settings = settings_from(args)
    if settings.secret_key:
        return fail("the key comes from LOBBYTALKS_SECRET_KEY (or its _FILE), which would "
                    "override a rotated key file at the next start: write its value to "
                    "DATA_DIR/secret.key (mode 0600), unset the variable, run rotate-key, then "
                    "keep the file or put its new contents back into the variable")
    if not settings.uses_postgres and not settings.db_path.is_file():  # never made empty
        return fail(f"{settings.db_path}: no such database file")
    try:
        opened = _opened_alone(settings)
    except serverlock.DatabaseInUse as exc:
        # A running server keeps the old keyring in memory and could not open rows re-sealed
        # under the new key, so rotation needs every server stopped.
        return fail(f"stop the server before rotating the key: {exc}")
    except DatabaseError as exc:  # (a read-only folder, a file that is no database)
        return fail(f"cannot open {settings.database_shown}: {exc}")
    conn, let_go = opened
    try:
        keyring = keystore.load_keyring(env_value="", key_path=settings.secret_key_path,
                                      create=False)
        key_rotation.verify_keyring(conn, keyring)
        new, count = key_rotation.rotate_key(conn, settings.secret_key_path, keyring)
    except crypto.SecretKeyProblem as exc:
        return fail(str(exc))
    # rolled back, the key file as it was; a damaged row is named (the keyring's check
    # opens only the first sealed one)
    except (DatabaseError, OSError, crypto.DecryptionFailed) as exc:
        return fail(f"nothing was rotated: {exc}")
    finally:
        let_go()
    print(f"re-encrypted {count} private context value(s) under key {new.current_id} "
          f"({new.fingerprint()}); key file: {settings.secret_key_path}")
    return 0


def _opened_alone(settings):
    """(connection, let go) on a database no server uses: SQLite holds the serving lock
    meanwhile; PostgreSQL refuses while any other session is connected to the database.

    :raise serverlock.DatabaseInUse: a server (or anything else) is using it.
    """

    from .. import pgops, serverlock
    from ..db import connect

    if settings.uses_postgres:
        db = open_postgres(settings)
        others = pgops.other_sessions(db.conn)
        if others:
            db.close()
            raise serverlock.DatabaseInUse(
                f"{others} other session(s) are connected to {settings.database_shown} "
                "(LobbyTalks servers, psql...); stop them first")
        return db.conn, db.close
    lock = serverlock.acquire(Path(settings.db_path))
    conn = connect(settings.db_path)

    def let_go() -> None:
        conn.close()
        serverlock.release(lock)
    return conn, let_go
