-- A question's message_count counts its valid answers only: an answer an admin hides no
-- longer takes one of the question's 200 places, so hiding a flood gives the room back.
-- Before this, hidden answers stayed counted; count them out once.
UPDATE topics SET message_count = (
    SELECT COUNT(*) FROM messages m WHERE m.topic_id = topics.id AND m.hidden_at IS NULL)
WHERE EXISTS (
    SELECT 1 FROM messages m WHERE m.topic_id = topics.id AND m.hidden_at IS NOT NULL);
