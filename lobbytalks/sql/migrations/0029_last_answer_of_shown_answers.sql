-- When a question's newest answer came is that of its newest shown one: hiding an answer
-- left it as it was (a question whose only answer an admin hid was "recently answered",
-- and not "without an answer"). Kept so since, as the count is (move_message_count).
UPDATE topics SET last_answer_at = COALESCE(
    (SELECT MAX(m.created) FROM messages m WHERE m.topic_id = topics.id AND m.hidden_at IS NULL), 0)
WHERE EXISTS (SELECT 1 FROM messages h WHERE h.topic_id = topics.id AND h.hidden_at IS NOT NULL);
