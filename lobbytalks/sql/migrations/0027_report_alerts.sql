-- The admins hear of a new report (report_received) in their inbox and, when they asked for
-- mail, by mail: the queue on /admin waited unseen for whoever next opened the page. SQLite
-- cannot change a CHECK in place, so the table is rebuilt with the longer list of kinds, as
-- 0025 did (its ids, and so the mail outbox's references to them, stay; migrate() turns
-- foreign keys off around it). The admins are found by a partial index of their own.
CREATE TABLE notifications_new (
    id         INTEGER PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind       TEXT NOT NULL CHECK (kind IN ('answer', 'share_request', 'card_published',
                                             'card_hidden', 'card_republishable',
                                             'task_failed', 'task_expired',
                                             'answer_hidden', 'answer_restored',
                                             'question_closed', 'question_reopened',
                                             'question_hidden', 'question_restored',
                                             'report_settled', 'report_received')),
    topic_id   TEXT NOT NULL REFERENCES topics (id),
    message_id TEXT REFERENCES messages (id),
    task_id    TEXT REFERENCES tasks (id) ON DELETE CASCADE,
    created    INTEGER NOT NULL,
    read_at    INTEGER,                       -- NULL while unread
    mailed     INTEGER NOT NULL DEFAULT 0,
    cause      TEXT
);
INSERT INTO notifications_new (id, user_id, kind, topic_id, message_id, task_id, created,
                               read_at, mailed, cause)
SELECT id, user_id, kind, topic_id, message_id, task_id, created, read_at, mailed, cause
FROM notifications;
DROP TABLE notifications;
ALTER TABLE notifications_new RENAME TO notifications;
CREATE INDEX notifications_user ON notifications (user_id, id DESC);
CREATE INDEX notifications_unread ON notifications (user_id) WHERE read_at IS NULL;
CREATE INDEX notifications_message ON notifications (message_id, kind) WHERE message_id IS NOT NULL;
CREATE INDEX notifications_mailed ON notifications (user_id, created) WHERE mailed = 1;
CREATE INDEX users_admins ON users (id) WHERE is_admin = 1;
