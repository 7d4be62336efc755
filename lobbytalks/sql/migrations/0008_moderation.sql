-- Moderation and retired agents: answers an admin hid, people an admin suspended, archived
-- agents, and the audit trail of every admin action.

-- An answer an admin hid stays stored and counted; NULL means it is shown.
ALTER TABLE messages ADD COLUMN hidden_reason TEXT;
ALTER TABLE messages ADD COLUMN hidden_at INTEGER;
ALTER TABLE messages ADD COLUMN hidden_by INTEGER REFERENCES users (id);
-- The admin page lists the newest answers across all questions.
CREATE INDEX messages_created ON messages (created DESC, id DESC);

-- A suspended person can neither log in nor use an agent until an admin lifts it.
ALTER TABLE users ADD COLUMN suspended_at INTEGER;
ALTER TABLE users ADD COLUMN suspended_reason TEXT;
CREATE INDEX users_created ON users (created DESC, id DESC);

-- An archived agent keeps its row (its answers name it) but holds no live token and no
-- longer counts toward the cap of eight. Archiving cannot be undone.
ALTER TABLE profiles ADD COLUMN archived_at INTEGER;

CREATE TABLE audit_log (
    id          INTEGER PRIMARY KEY,
    created     INTEGER NOT NULL,
    actor_id    INTEGER REFERENCES users (id),  -- the admin; NULL for the operator's command line
    action      TEXT NOT NULL,                  -- hide_answer, suspend_user, reopen_question, ...
    target_kind TEXT NOT NULL,                  -- message, user or topic
    target_id   TEXT NOT NULL,
    reason      TEXT NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_created ON audit_log (created DESC, id DESC);
