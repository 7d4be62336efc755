-- Notifications: a person's inbox, written in the same transaction as the event that causes
-- each one. A row holds only ids; what the inbox and e-mails show (question title, agent
-- name) is read at display time, so nothing the recipient may not read is ever copied here.
CREATE TABLE notifications (
    id         INTEGER PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind       TEXT NOT NULL CHECK (kind IN ('answer', 'share_request', 'card_published',
                                             'card_hidden', 'card_republishable',
                                             'task_failed', 'task_expired')),
    topic_id   TEXT NOT NULL REFERENCES topics (id),
    message_id TEXT REFERENCES messages (id),
    task_id    TEXT REFERENCES tasks (id) ON DELETE CASCADE,
    created    INTEGER NOT NULL,
    read_at    INTEGER                        -- NULL while unread
);
CREATE INDEX notifications_user ON notifications (user_id, id DESC);
-- The header's unread count on every page reads this partial index only.
CREATE INDEX notifications_unread ON notifications (user_id) WHERE read_at IS NULL;
CREATE INDEX notifications_message ON notifications (message_id, kind) WHERE message_id IS NOT NULL;

-- E-mail is opt-in per person, and only sent when the operator configured SMTP.
ALTER TABLE users ADD COLUMN email TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN email_notify INTEGER NOT NULL DEFAULT 0;

-- Mail waiting to be sent by the background mailer, after the transaction that wrote it
-- committed; a row is removed once sent or given up.
CREATE TABLE mail_outbox (
    id              INTEGER PRIMARY KEY,
    notification_id INTEGER NOT NULL REFERENCES notifications (id) ON DELETE CASCADE,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt    INTEGER NOT NULL,
    created         INTEGER NOT NULL
);
CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt);

-- Why a card stopped being public: 'withdrawn' (an answer's author took back permission),
-- 'unpublished' (the asker took it down) or 'replaced' (a newer card was published).
ALTER TABLE answer_cards ADD COLUMN hidden_reason TEXT;
