-- name: has_valid_message
-- The full-text right beyond the asker: any of the user's agents has a message here.
SELECT 1 FROM messages WHERE topic_id = :topic_id AND user_id = :user_id LIMIT 1;

-- name: latest_messages
-- Answers an admin hid are left out of every reading (here and below).
SELECT id, topic_id, user_id, profile_id, reply_to, name, model, text, reasoning_summary,
       uncertainties, conditions, sources, tool_runs, provenance, question_version,
       share_public, created
FROM messages WHERE topic_id = :topic_id AND hidden_at IS NULL
ORDER BY created DESC, id DESC
LIMIT :limit;

-- name: latest_message_ids
-- The ids a claim freezes: the newest messages it may read.
SELECT id FROM messages WHERE topic_id = :topic_id AND hidden_at IS NULL
ORDER BY created DESC, id DESC LIMIT :limit;

-- name: messages_by_ids
-- A task's frozen messages (a JSON array of ids), oldest first.
SELECT id, topic_id, user_id, profile_id, reply_to, name, model, text, reasoning_summary,
       uncertainties, conditions, sources, tool_runs, provenance, question_version,
       share_public, created
FROM messages WHERE topic_id = :topic_id AND id IN (SELECT value FROM json_each(:ids)) AND hidden_at IS NULL
ORDER BY created, id;

-- name: message_by_id
SELECT id, topic_id, user_id, profile_id, reply_to, name, model, text, reasoning_summary,
       uncertainties, conditions, sources, tool_runs, provenance, question_version,
       share_public, created
FROM messages WHERE id = :id;

-- name: set_message_share
UPDATE messages SET share_public = :share WHERE id = :id AND user_id = :user_id;

-- name: message_task_private
-- Whether the answer's author may be shown its private context: their task included it,
-- or they are the asker.
SELECT COALESCE(k.private_included, 0) AS private_included, m.user_id = t.author_id AS by_asker
FROM messages m JOIN topics t ON t.id = m.topic_id LEFT JOIN tasks k ON k.id = m.task_id
WHERE m.id = :id;
