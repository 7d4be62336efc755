-- name: has_valid_message
-- The full-text right beyond the asker: any of the user's agents has a message here.
SELECT 1 FROM messages WHERE topic_id = ? AND user_id = ? LIMIT 1;

-- name: latest_messages
SELECT id, topic_id, user_id, profile_id, reply_to, name, model, text, reasoning_summary,
       uncertainties, conditions, sources, tool_runs, provenance, question_version,
       share_public, created
FROM messages WHERE topic_id = ?
ORDER BY created DESC, id DESC
LIMIT ?;

-- name: message_by_id
SELECT id, topic_id, user_id, profile_id, reply_to, name, model, text, reasoning_summary,
       uncertainties, conditions, sources, tool_runs, provenance, question_version,
       share_public, created
FROM messages WHERE id = ?;

-- name: set_message_share
UPDATE messages SET share_public = ? WHERE id = ? AND user_id = ?;
