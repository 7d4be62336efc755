"""Deleting one's own account: what identifies the person goes, what others wrote stays.

In one write the name becomes ``deleted_`` and 16 random hex digits (no one may register a
name that starts so), the password can match nothing, and the e-mail address, every login,
agent token, memory, notification, report sent, "ask my agents" mark and membership are gone;
the person's agents are archived and their leases fail; their open questions close and the
private context of every version of every question they asked is erased.

What stays is what others wrote or rely on: the questions' public text with their answers,
and the answers of the person's agents (others asked for them and may have built a card on
them), now under the new name, whose profile page is not found; the audit log's entries
about the person name it by the new name too. The row itself stays for them to point at.
An admin cannot delete their account (the operator revokes the role first), as an admin
cannot be suspended.
"""
from __future__ import annotations

import secrets

from ..db import Connection, Database, Q
from ..errors import ApiError
from .accounts import DELETED_PREFIX, require_password_still
from .audit import record
from .locks import hold_user

DELETED_TASK = "智能体的主人删除了账号，任务已结束"
ADMIN_REFUSED = "管理员不能删除自己的账号；请先由运维撤销其管理员身份"

# Each takes :user (and :now where it writes a time), in this order: the member counts
# before the memberships that say which to lower.
_ERASE = (Q.delete_user_sessions, Q.revoke_tokens_of_user, Q.archive_agents_of_user,
          Q.delete_memories_of_user, Q.delete_notifications_of_user,
          Q.delete_agent_requests_of_user, Q.delete_reports_of_user,
          Q.uncount_memberships_of_user, Q.delete_memberships_of_user,
          Q.close_questions_of_user, Q.forget_private_contexts_of_user)


def delete(db: Database, user_id: int, *, now: int, checked: str | None = None) -> str | None:
    """Delete the account ``user_id``; the name it now has, or None when it was deleted
    already (a second tab's request). ``checked``: the hash of the password the request
    checked, still the account's (``accounts.require_password_still``).

    :raise 403 forbidden: an admin, or a password changed since it was checked.
    """
    with db.transaction() as conn:
        if checked is not None:
            require_password_still(conn, user_id, checked)
        return _delete(conn, user_id, now)


def delete_by_name(db: Database, username: str, *, now: int) -> str | None:
    """The operator's deletion (``lobbytalks admin delete-user``, for a person who can no
    longer log in), audited; the new name, or None when there is no such account.

    :raise 403 forbidden: an admin."""
    with db.transaction() as conn:
        row = conn.execute(Q.get_user_by_name, {"username": username}).fetchone()
        name = row and _delete(conn, row["id"], now)
        if name:
            record(conn, None, "delete_user", "user", name, "", now)  # not the old name
        return name


def _delete(conn: Connection, user_id: int, now: int) -> str | None:
    hold_user(conn, user_id)  # against a login, a password change or a claim meanwhile
    state = conn.execute(Q.get_account_state, {"id": user_id}).fetchone()
    if state is None or state["deleted_at"] is not None:
        return None
    if state["is_admin"]:
        raise ApiError("forbidden", ADMIN_REFUSED)
    name = DELETED_PREFIX + secrets.token_hex(8)
    conn.execute(Q.anonymize_user, {"id": user_id, "name": name, "now": now})
    conn.execute(Q.rename_audit_target, {"name": name, "old": state["username"]})
    conn.execute(Q.fail_leased_of_user, {"user": user_id, "reason": DELETED_TASK, "now": now})
    for query in _ERASE:
        conn.execute(query, {"user": user_id, "user_id": user_id, "now": now})
    return name
