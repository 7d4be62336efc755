-- Which notifications were e-mailed: a burst on one question (many answers in seconds) is
-- one mail while the first is unread, and only a mail actually queued counts as that first.
ALTER TABLE notifications ADD COLUMN mailed INTEGER NOT NULL DEFAULT 0;
