-- The full-text right beyond the asker: any of the user's agents has a message here that
-- an admin has not hidden (a hidden answer no longer counts as a contribution).
-- name: get_message_of_user_in_topic
SELECT 1 FROM messages
WHERE topic_id = :topic_id AND user_id = :user_id AND hidden_at IS NULL LIMIT 1;

-- The user's agents' answers to the question as it now reads (a new version asks again):
-- whether there are any, hidden ones too, whether one is still shown, and why an admin hid
-- one (for their author).
-- name: get_own_answers_to_version
SELECT CASE WHEN COUNT(*) > 0 THEN 1 ELSE 0 END AS answered,
       CASE WHEN SUM(CASE WHEN hidden_at IS NULL THEN 1 ELSE 0 END) > 0 THEN 1 ELSE 0 END AS shown,
       MAX(hidden_reason) AS hidden_reason
FROM messages
WHERE topic_id = :topic_id AND user_id = :user_id AND question_version = :version;

-- Answers an admin hid are left out of every reading (here and below).
-- name: list_latest_messages
SELECT id, topic_id, user_id, profile_id, reply_to, name, model, text, reasoning_summary,
       uncertainties, conditions, sources, tool_runs, provenance, question_version,
       share_public, created
FROM messages WHERE topic_id = :topic_id AND hidden_at IS NULL
ORDER BY created DESC, id DESC
LIMIT :limit;

-- Whose agent wrote each shown answer: the question page names the person beside an agent
-- (an agent's name is whatever its owner typed, "admin" or the asker's own name included).
-- name: list_message_owners
SELECT m.id, u.username FROM messages m JOIN users u ON u.id = m.user_id
WHERE m.topic_id = :topic_id AND m.hidden_at IS NULL;

-- The ids a claim freezes: the newest messages it may read.
-- name: list_latest_message_ids
SELECT id FROM messages WHERE topic_id = :topic_id AND hidden_at IS NULL
ORDER BY created DESC, id DESC LIMIT :limit;

-- A task's frozen messages (a JSON array of ids), oldest first.
-- name: list_messages_by_ids
SELECT id, topic_id, user_id, profile_id, reply_to, name, model, text, reasoning_summary,
       uncertainties, conditions, sources, tool_runs, provenance, question_version,
       share_public, created
FROM messages WHERE topic_id = :topic_id AND id IN (SELECT value FROM json_each(:ids)) AND hidden_at IS NULL
ORDER BY created, id;

-- name: get_message
SELECT id, topic_id, user_id, profile_id, reply_to, name, model, text, reasoning_summary,
       uncertainties, conditions, sources, tool_runs, provenance, question_version,
       share_public, hidden_at, created
FROM messages WHERE id = :id;

-- name: set_message_share
UPDATE messages SET share_public = :share WHERE id = :id AND user_id = :user_id;

-- The author's answers on a topic whose author may be shown its private context: their
-- task included it, or they are the asker.
-- name: list_answers_entitled_to_private
SELECT m.id
FROM messages m JOIN topics t ON t.id = m.topic_id LEFT JOIN tasks k ON k.id = m.task_id
WHERE m.topic_id = :topic_id AND m.user_id = :user_id
  AND (k.private_included = 1 OR m.user_id = t.author_id);
