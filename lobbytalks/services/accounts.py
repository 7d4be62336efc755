"""Accounts: registration, password login, password changes, sessions and the
operator-granted admin role."""
from __future__ import annotations


from ..db import Connection, Database, IntegrityError, Q
from ..errors import ApiError
from ..passwords import Argon2Cost, hash_password, needs_rehash, verify_password, \
    verify_password_timing_safe
from .audit import record
from .locks import hold_user

LOGIN_FAILED = "用户名或密码不正确"
ACCOUNT_DELETED = "账号已删除"
NAME_TAKEN = "username: 用户名已被使用"
# the names deleted accounts get (services.account_deletion): never a new account's
DELETED_PREFIX = "deleted_"


def is_deleted_name(username: str) -> bool:
    """Whether ``username`` is one only a deleted account has (no profile to link to)."""
    return username.lower().startswith(DELETED_PREFIX)


class AdminNameTaken(RuntimeError):
    """LOBBYTALKS_ADMIN_USERNAME names an account that is not an administrator."""


def register(db: Database, username: str, password: str, *, now: int,
             cost: Argon2Cost) -> int:
    """Create an account; :raise 409: when the name is taken (case-insensitively); :raise
    400: for a name only deleted accounts get (the form says why, at the field). The
    password is held to the protocol's rule (10–128 characters) only: a client written from
    it may register any such password, so the guessability rule (``password_rules``) is for
    LobbyTalks' own actions, and for the register page, which asks for it."""
    if is_deleted_name(username):
        raise ApiError("invalid_request",
                       f"username: 以 {DELETED_PREFIX} 开头的用户名留给已删除的账号")
    password_hash = hash_password(password, cost)
    try:
        with db.transaction() as conn:
            return conn.execute(Q.insert_user, {"username": username,
                                                "password_hash": password_hash, "is_admin": 0,
                                                "now": now}).fetchone()[0]
    except IntegrityError:
        raise ApiError("invalid_request", NAME_TAKEN, status=409) from None


def authenticate(db: Database, username: str, password: str, *, cost: Argon2Cost
                 ) -> tuple[int, str] | None:
    """The user id and the password hash that was checked, for a correct password, else
    None (same cost for unknown names). A session is started only while that hash is
    still the one stored (``auth.start_session``): a password changed meanwhile wins.

    A correct password stored under an older scheme or cost (scrypt) is re-hashed now.
    """
    row = db.one(Q.get_user_by_name, {"username": username})
    stored = row["password_hash"] if row else None
    # Verify first, even for a missing user: the answer must take the same time either way.
    if not verify_password_timing_safe(password, stored, cost) or row is None:
        return None
    if needs_rehash(stored, cost):
        with db.transaction() as conn:
            stored = _upgrade_hash(conn, row["id"], stored, password, cost)
    return row["id"], stored


def _upgrade_hash(conn: Connection, user_id: int, stored: str, password: str,
                  cost: Argon2Cost) -> str:
    """The same password under the current scheme and cost (the sessions stay), only if
    the stored hash is still the one checked; the hash in place afterwards."""
    upgraded = hash_password(password, cost)
    replaced = conn.execute(Q.replace_password_hash, {"password_hash": upgraded,
                                                      "id": user_id, "stored": stored})
    return upgraded if replaced.rowcount == 1 else stored


def password_hash_of(db: Database, username: str) -> str | None:
    """The account's password hash (for ``devices``), None when there is no such account."""
    row = db.one(Q.get_user_by_name, {"username": username})
    return row["password_hash"] if row else None


def password_still(conn: Connection, user_id: int, checked: str) -> bool:
    """Whether ``checked`` is still the user's password hash (read under their row lock)."""
    row = conn.execute(Q.get_password_hash, {"id": user_id}).fetchone()
    return row is not None and row["password_hash"] == checked


CURRENT_PASSWORD_WRONG = "currentPassword: 当前密码不正确"


def require_password_still(conn: Connection, user_id: int, checked: str) -> None:
    """The password a request checked (``checked``, its hash) is still the account's, read
    under the user's row lock: a change committed since (the owner's own, elsewhere) ended
    every session, and an old session holding the old password must not then act on it.

    :raise 401: the account was deleted meanwhile; :raise 403: as a wrong current password
        (it is one now)."""
    hold_user(conn, user_id)
    refuse_if_deleted(conn, user_id)
    if not password_still(conn, user_id, checked):
        raise ApiError("forbidden", CURRENT_PASSWORD_WRONG)


def set_password(db: Database, user_id: int, password: str, *, cost: Argon2Cost,
                 checked: str | None = None) -> str:
    """A new password, whose hash is returned; every session of the account ends in the
    same write. ``checked``: the hash of the current password the request checked
    (``require_password_still``)."""
    password_hash = hash_password(password, cost)
    with db.transaction() as conn:
        if checked is not None:
            require_password_still(conn, user_id, checked)
        replace_password(conn, user_id, password_hash)
    return password_hash


def replace_password(conn: Connection, user_id: int, password_hash: str) -> None:
    """The one place a password is replaced: whoever held a session under the old password
    must log in again. Under the user's row lock, as a session's start and a deletion are.

    :raise 401: the account was deleted meanwhile (its password stays one that matches
        nothing)."""
    hold_user(conn, user_id)
    if conn.execute(Q.set_password_hash, {"password_hash": password_hash,
                                          "id": user_id}).rowcount != 1:
        raise ApiError("unauthorized", ACCOUNT_DELETED)
    conn.execute(Q.delete_user_sessions, {"user_id": user_id})


def refuse_if_deleted(conn: Connection, user_id: int) -> None:
    """:raise 401: the account was deleted (a login or a password change that checked its
    password just before the deletion gets nothing)."""
    state = conn.execute(Q.get_account_state, {"id": user_id}).fetchone()
    if state is None or state["deleted_at"] is not None:
        raise ApiError("unauthorized", ACCOUNT_DELETED)


def reset_password(db: Database, username: str, password: str, *, cost: Argon2Cost,
                   now: int) -> bool:
    """The operator's reset of a forgotten password (``lobbytalks admin reset-password``):
    every session ends, and the audit log records it; False when there is no such user."""
    password_hash = hash_password(password, cost)
    with db.transaction() as conn:
        row = conn.execute(Q.get_user_by_name, {"username": username}).fetchone()
        if row is None or row["deleted_at"] is not None:
            return False
        replace_password(conn, row["id"], password_hash)
        record(conn, None, "reset_password", "user", row["username"], "", now)
    return True


def end_all_sessions(db: Database, user_id: int) -> int:
    """Log the user out everywhere; the number of sessions ended."""
    with db.transaction() as conn:
        return conn.execute(Q.delete_user_sessions, {"user_id": user_id}).rowcount


def live_sessions(conn: Connection, user_id: int, now: int) -> int:
    return conn.execute(Q.count_live_sessions, {"user_id": user_id, "now": now}).fetchone()[0]


def set_admin(db: Database, username: str, admin: bool) -> bool:
    """Grant or revoke the admin role; False when there is no such user."""
    with db.transaction() as conn:
        return conn.execute(Q.set_admin, {
            "is_admin": int(admin), "username": username}).rowcount == 1


def change_admin(db: Database, username: str, admin: bool, *, now: int) -> bool | None:
    """The operator's grant or revoke (``lobbytalks admin grant|revoke``), audited in the
    same write. True when the role changed, False when the account already had it that way
    (nothing recorded), None when there is no such user."""
    with db.transaction() as conn:  # the change and its audit entry commit together
        row = conn.execute(Q.get_user_by_name, {"username": username}).fetchone()
        if row is None or row["deleted_at"] is not None:  # (as reset_password has it)
            return None
        if bool(row["is_admin"]) == admin:
            return False
        conn.execute(Q.set_admin, {"is_admin": int(admin), "username": username})
        record(conn, None, f"{'grant' if admin else 'revoke'}_admin", "user", row["username"], "",
               now)
    return True


def ensure_admin(db: Database, username: str, password: str, *, now: int,
                 cost: Argon2Cost) -> None:
    """Create the configured administrator (LOBBYTALKS_ADMIN_USERNAME/_PASSWORD), or set
    the configured password on it when it differs (ending its sessions).

    :raise AdminNameTaken: when the name belongs to an account that is not an admin:
        anyone may have registered it first, so it is never promoted silently.
    """
    with db.transaction() as conn:
        row = conn.execute(Q.get_user_by_name, {"username": username}).fetchone()
        if row is None:
            if conn.execute(Q.insert_admin_if_absent, {
                    "username": username, "password_hash": hash_password(password, cost),
                    "now": now}).fetchone() is not None:
                return
            # another process made it at the same moment (its commit ended our wait)
            row = conn.execute(Q.get_user_by_name, {"username": username}).fetchone()
        if not row["is_admin"]:
            raise AdminNameTaken(
                f"LOBBYTALKS_ADMIN_USERNAME names the account {row['username']!r}, which exists "
                "and is not an administrator (anyone may have registered that name). If it is "
                f"yours, run `lobbytalks admin grant {row['username']}`; otherwise choose "
                "another name. Nothing was changed.")
        if not verify_password(password, row["password_hash"]):
            replace_password(conn, row["id"], hash_password(password, cost))
        elif needs_rehash(row["password_hash"], cost):
            _upgrade_hash(conn, row["id"], row["password_hash"], password, cost)
