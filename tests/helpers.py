"""Assertions shared by every surface's tests: one canonical error shape per surface."""
from __future__ import annotations

import json
import re
from html import unescape

from lobbytalks.errors import CODES


def assert_external_error(response, status: int, code: str) -> dict:
    """The external/manage envelope: exactly {error, code}, the right status, no caching."""
    body = response.get_json()
    assert response.status_code == status, (response.status_code, body)
    assert set(body) == {"error", "code"}, body
    assert body["code"] == code, body
    assert code in CODES and body["error"]
    assert response.headers.get("Cache-Control") == "no-store"
    return body


def assert_web_error(response, status: int, code: str | None = None) -> dict:
    """The web envelope: exactly {error, code}, a message people can read and a code from
    the protocol's table (the one given, when the test names it)."""
    body = response.get_json()
    assert response.status_code == status, (response.status_code, body)
    assert set(body) == {"error", "code"} and body["error"], body
    assert body["code"] in CODES, body
    if code is not None:
        assert body["code"] == code, body
    assert response.headers.get("Cache-Control") == "no-store"
    return body


def _notifications_holding(kinds: str) -> str:
    """The notifications table rebuilt to hold only ``kinds`` (as a migration before the one
    undone left it; foreign keys are off in a plain sqlite3 connection, so the queued mails
    stay), those of other kinds gone."""
    return f"""
    DELETE FROM notifications WHERE kind NOT IN ({kinds});
    CREATE TABLE notifications_old (
        id         INTEGER PRIMARY KEY,
        user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        kind       TEXT NOT NULL CHECK (kind IN ({kinds})),
        topic_id   TEXT NOT NULL REFERENCES topics (id),
        message_id TEXT REFERENCES messages (id),
        task_id    TEXT REFERENCES tasks (id) ON DELETE CASCADE,
        created    INTEGER NOT NULL,
        read_at    INTEGER,
        mailed     INTEGER NOT NULL DEFAULT 0,
        cause      TEXT
    );
    INSERT INTO notifications_old SELECT * FROM notifications;
    DROP TABLE notifications;
    ALTER TABLE notifications_old RENAME TO notifications;
    CREATE INDEX notifications_user ON notifications (user_id, id DESC);
    CREATE INDEX notifications_unread ON notifications (user_id) WHERE read_at IS NULL;
    CREATE INDEX notifications_message ON notifications (message_id, kind)
        WHERE message_id IS NOT NULL;
    CREATE INDEX notifications_mailed ON notifications (user_id, created) WHERE mailed = 1;
"""


_KINDS_0007 = ("'answer', 'share_request', 'card_published', 'card_hidden', "
               "'card_republishable', 'task_failed', 'task_expired'")
_KINDS_0015 = _KINDS_0007 + (", 'answer_hidden', 'answer_restored', 'question_closed', "
                             "'question_reopened', 'question_hidden', 'question_restored'")
_KINDS_0025 = _KINDS_0015 + ", 'report_settled'"
# What migrations 0014, 0012 and 0011 added, taken away again: a database as version 10
# left it (for the tests that migrate an older database; 0013 changed counts only).
# (0028 rewrote the search index's rows only, 0029 a column's values.)
# 0027 rebuilt the notifications table to hold report_received, and indexed the admins.
UNDO_0027 = _notifications_holding(_KINDS_0025) + """
    DROP INDEX users_admins;
"""
# 0026 added the moment an account was deleted.
UNDO_0026 = UNDO_0027 + """
    ALTER TABLE users DROP COLUMN deleted_at;
"""
# 0025 rebuilt the notifications table to hold report_settled.
UNDO_0025 = UNDO_0026 + _notifications_holding(_KINDS_0015)
# 0024 added the mark of a password reset asked for and the index of confirmed addresses.
UNDO_0024 = UNDO_0025 + """
    DROP INDEX users_confirmed_email;
    DROP INDEX users_password_reset_due;
    ALTER TABLE users DROP COLUMN password_reset_due;
"""
# 0023 added the reports table (0022 changed the search index's rows only).
UNDO_0023 = UNDO_0024 + """
    DROP TABLE reports;
"""
UNDO_0022 = UNDO_0023
# 0021 added an index of a person's questions by state.
UNDO_0021 = UNDO_0022 + """
    DROP INDEX topics_author_questions;
"""
# 0020 added the requestId a community was created with.
UNDO_0020 = UNDO_0021 + """
    DROP INDEX communities_request;
    ALTER TABLE communities DROP COLUMN request_id;
    ALTER TABLE communities DROP COLUMN request_hash;
"""
# 0019 marked the agents' own failures from before 0017 (data only: nothing to undo).
UNDO_0019 = UNDO_0020
# 0018 added the requestId a question was asked with.
UNDO_0018 = UNDO_0019 + """
    DROP INDEX topics_request;
    ALTER TABLE topics DROP COLUMN request_id;
    ALTER TABLE topics DROP COLUMN request_hash;
"""
# 0017 added who wrote a failed task's reason.
UNDO_0017 = UNDO_0018 + """
    ALTER TABLE tasks DROP COLUMN agent_failed;
"""
# 0016 added the columns of a question taken down and left it out of topic_listing.
UNDO_0016 = UNDO_0017 + """
    DROP VIEW topic_listing;
    CREATE VIEW topic_listing AS
    SELECT t.rowid AS search_rowid, t.id, t.title, t.description, t.community_id, t.island_id,
           t.kind, t.created, t.message_count, t.last_answer_at, t.intent, t.version, t.status,
           u.username AS author_name, c.name AS community_name,
           CASE WHEN EXISTS (SELECT 1 FROM answer_cards a
                             WHERE a.topic_id = t.id AND a.state = 'published')
                THEN 1 ELSE 0 END AS has_card
    FROM topics t JOIN users u ON u.id = t.author_id JOIN communities c ON c.id = t.community_id;
    ALTER TABLE topics DROP COLUMN hidden_at;
    ALTER TABLE topics DROP COLUMN hidden_reason;
    ALTER TABLE topics DROP COLUMN hidden_by;
"""
# 0015 rebuilt the notifications table with more kinds; undone, it has the old list again.
UNDO_0015 = UNDO_0016 + _notifications_holding(_KINDS_0007)
UNDO_0014 = UNDO_0015 + """
    DROP INDEX notifications_mailed;
    ALTER TABLE notifications DROP COLUMN mailed;
    ALTER TABLE notifications DROP COLUMN cause;
"""
UNDO_0012 = UNDO_0014 + """
    DROP INDEX users_email_code_due;
    ALTER TABLE users DROP COLUMN email_confirmed;
    ALTER TABLE users DROP COLUMN email_code_due;
"""
UNDO_0011 = UNDO_0012 + """
    DROP INDEX tasks_profile_created;
    DROP INDEX agent_requests_user_created;
    ALTER TABLE communities DROP COLUMN member_count;
    ALTER TABLE communities DROP COLUMN topic_count;
"""


def actions(page: str) -> list[dict]:
    """The JSON bodies a page's buttons would post (their ``data-body``)."""
    return [json.loads(unescape(raw)) for raw in re.findall(r"data-body='([^']*)'", page)]
