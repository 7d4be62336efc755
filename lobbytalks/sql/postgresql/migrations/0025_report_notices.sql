-- A person whose report an admin settled hears of it (report_settled), as the asker and the
-- authors hear of what an admin did to their things.
ALTER TABLE notifications DROP CONSTRAINT notifications_kind_check;
ALTER TABLE notifications ADD CONSTRAINT notifications_kind_check
    CHECK (kind IN ('answer', 'share_request', 'card_published', 'card_hidden',
                    'card_republishable', 'task_failed', 'task_expired', 'answer_hidden',
                    'answer_restored', 'question_closed', 'question_reopened',
                    'question_hidden', 'question_restored', 'report_settled'));
