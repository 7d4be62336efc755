"""Accounts: registration, password login and the operator-granted admin role."""
from __future__ import annotations

import sqlite3

from ..db import Database, Q
from ..errors import ApiError
from ..security import hash_password, verify_password_timing_safe

LOGIN_FAILED = "用户名或密码不正确"


def register(db: Database, username: str, password: str, *, now: int, scrypt_n: int) -> int:
    """Create an account; :raise 409: when the name is taken (case-insensitively)."""
    password_hash = hash_password(password, n=scrypt_n)
    try:
        with db.transaction() as conn:
            return conn.execute(Q.insert_user, (username, password_hash, 0, now)).fetchone()[0]
    except sqlite3.IntegrityError:
        raise ApiError("invalid_request", "用户名已被使用", status=409) from None


def authenticate(db: Database, username: str, password: str, *, scrypt_n: int) -> int | None:
    """The user id for a correct password, else None (same cost for unknown names)."""
    row = db.one(Q.user_by_name, (username,))
    stored = row["password_hash"] if row else None
    if verify_password_timing_safe(password, stored, n=scrypt_n) and row is not None:
        return row["id"]
    return None


def set_admin(db: Database, username: str, admin: bool) -> bool:
    """Grant or revoke the admin role; False when there is no such user."""
    with db.transaction() as conn:
        return conn.execute(Q.set_admin, (int(admin), username)).rowcount == 1


def ensure_admin(db: Database, username: str, password: str, *, now: int, scrypt_n: int) -> None:
    """Upsert the configured administrator (LOBBYTALKS_ADMIN_USERNAME/_PASSWORD)."""
    password_hash = hash_password(password, n=scrypt_n)
    with db.transaction() as conn:
        row = conn.execute(Q.user_by_name, (username,)).fetchone()
        if row:
            conn.execute(Q.set_password_and_admin, (password_hash, row["id"]))
        else:
            conn.execute(Q.insert_user, (username, password_hash, 1, now))
