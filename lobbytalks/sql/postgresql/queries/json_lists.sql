-- JSON arrays of message ids are kept as TEXT: SQLite reads them with json_each,
-- PostgreSQL with json_array_elements_text. Same names and parameters as the common queries.

-- name: list_authors_of_messages
SELECT DISTINCT user_id FROM messages WHERE id IN (SELECT json_array_elements_text(CAST(:message_ids AS json)));

-- name: list_messages_by_ids
SELECT id, topic_id, user_id, profile_id, reply_to, name, model, text, reasoning_summary,
       uncertainties, conditions, sources, tool_runs, provenance, question_version,
       share_public, created
FROM messages WHERE topic_id = :topic_id AND id IN (SELECT json_array_elements_text(CAST(:ids AS json))) AND hidden_at IS NULL
ORDER BY created, id;

-- name: list_recent_answers_for_admin
SELECT m.id, m.topic_id, t.title AS topic_title, m.name, u.username AS author, m.created,
       m.share_public, m.hidden_reason, m.hidden_at,
       CASE WHEN EXISTS (
           SELECT 1 FROM answer_cards c, json_array_elements_text(CAST(c.message_ids AS json)) j (value)
           WHERE c.topic_id = m.topic_id AND c.state = 'published' AND j.value = m.id)
       THEN m.text END AS public_text
FROM messages m JOIN topics t ON t.id = m.topic_id JOIN users u ON u.id = m.user_id
ORDER BY m.created DESC, m.id DESC
LIMIT :limit;
