-- Which notifications were e-mailed: a burst on one question (many answers in seconds) is
-- one mail while the first is unread, and only a mail actually queued counts as that first;
-- nor does anyone get more than a few an hour, however many questions send them one.
ALTER TABLE notifications ADD COLUMN mailed BIGINT NOT NULL DEFAULT 0;
-- A person's mails of the last hour, counted on every notification that would mail them.
CREATE INDEX notifications_mailed ON notifications (user_id, created) WHERE mailed = 1;
-- Why a notification came, where its kind alone would mislead: 'moderated' on a card_hidden
-- when an admin hid the answer (not its author withdrawing it); NULL otherwise.
ALTER TABLE notifications ADD COLUMN cause TEXT;
