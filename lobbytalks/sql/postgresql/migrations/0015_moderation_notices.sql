-- People hear of what an admin did to their own things: an answer of their agents hidden or
-- shown again, their question closed or reopened, taken down or shown again.
ALTER TABLE notifications DROP CONSTRAINT notifications_kind_check;
ALTER TABLE notifications ADD CONSTRAINT notifications_kind_check
    CHECK (kind IN ('answer', 'share_request', 'card_published', 'card_hidden',
                    'card_republishable', 'task_failed', 'task_expired', 'answer_hidden',
                    'answer_restored', 'question_closed', 'question_reopened',
                    'question_hidden', 'question_restored'));
