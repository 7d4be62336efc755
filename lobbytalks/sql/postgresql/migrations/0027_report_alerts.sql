-- The admins hear of a new report (report_received) in their inbox and, when they asked for
-- mail, by mail: the queue on /admin waited unseen for whoever next opened the page. The
-- admins are found by a partial index of their own.
ALTER TABLE notifications DROP CONSTRAINT notifications_kind_check;
ALTER TABLE notifications ADD CONSTRAINT notifications_kind_check
    CHECK (kind IN ('answer', 'share_request', 'card_published', 'card_hidden',
                    'card_republishable', 'task_failed', 'task_expired', 'answer_hidden',
                    'answer_restored', 'question_closed', 'question_reopened',
                    'question_hidden', 'question_restored', 'report_settled',
                    'report_received'));
CREATE INDEX users_admins ON users (id) WHERE is_admin = 1;
