-- name: insert_audit
INSERT INTO audit_log (created, actor_id, action, target_kind, target_id, reason)
VALUES (:now, :actor, :action, :kind, :target, :reason);

-- The newest audit entries with the acting admin's name (NULL: the command line).
-- name: list_recent_audit
SELECT a.id, a.created, a.action, a.target_kind, a.target_id, a.reason, u.username AS actor
FROM audit_log a LEFT JOIN users u ON u.id = a.actor_id
ORDER BY a.created DESC, a.id DESC
LIMIT :limit;

-- name: get_message_moderation_state
SELECT id, topic_id, user_id, hidden_at FROM messages WHERE id = :id;

-- Every shown answer of one person (messages_user), for a suspension that hides them all.
-- name: list_shown_answers_of_user
SELECT id, topic_id, user_id, hidden_at FROM messages
WHERE user_id = :user AND hidden_at IS NULL
ORDER BY topic_id, id;

-- name: hide_message
UPDATE messages SET hidden_reason = :reason, hidden_at = :now, hidden_by = :admin
WHERE id = :id AND hidden_at IS NULL;

-- name: unhide_message
UPDATE messages SET hidden_reason = NULL, hidden_at = NULL, hidden_by = NULL
WHERE id = :id AND hidden_at IS NOT NULL;

-- name: get_user_moderation_state
SELECT id, username, is_admin, suspended_at, suspended_reason FROM users
WHERE lower(username) = lower(:username);

-- Why a user is suspended; no row while they are not.
-- name: get_user_suspension
SELECT suspended_reason FROM users WHERE id = :id AND suspended_at IS NOT NULL;

-- name: suspend_user
UPDATE users SET suspended_at = :now, suspended_reason = :reason WHERE id = :id AND suspended_at IS NULL;

-- name: unsuspend_user
UPDATE users SET suspended_at = NULL, suspended_reason = NULL
WHERE id = :id AND suspended_at IS NOT NULL;

-- name: end_sessions_of_suspended
DELETE FROM sessions WHERE user_id = :user_id;

-- name: reopen_topic
UPDATE topics SET status = 'open', closed_at = NULL, closed_by = NULL, updated = :now
WHERE id = :id AND status = 'closed';

-- Public facts only: title and public background, never private context.
-- name: list_recent_topics_for_admin
SELECT t.id, t.title, t.description, t.status, t.created, t.message_count,
       t.community_id, u.username AS author, t.hidden_at, t.hidden_reason
FROM topics t JOIN users u ON u.id = t.author_id
ORDER BY t.created DESC, t.id DESC
LIMIT :limit;

-- The conclusion only of answers a published card already shows to everyone (see
-- services/moderation.py); never reasoning, sources or tool runs.
-- name: list_recent_answers_for_admin
SELECT m.id, m.topic_id, t.title AS topic_title, m.name, u.username AS author, m.created,
       m.share_public, m.hidden_reason, m.hidden_at,
       CASE WHEN EXISTS (
           SELECT 1 FROM answer_cards c, json_each(c.message_ids) j
           WHERE c.topic_id = m.topic_id AND c.state = 'published' AND j.value = m.id)
       THEN m.text END AS public_text
FROM messages m JOIN topics t ON t.id = m.topic_id JOIN users u ON u.id = m.user_id
ORDER BY m.created DESC, m.id DESC
LIMIT :limit;

-- name: list_recent_signups_for_admin
SELECT id, username, is_admin, created, suspended_at, suspended_reason
FROM users ORDER BY created DESC, id DESC
LIMIT :limit;

-- A token still good for writing: not revoked (rotated, archived, suspended) nor expired.
-- name: get_live_token
SELECT 1 FROM tokens WHERE id = :id AND revoked = 0 AND expires > :now;

-- Why a known token is refused: its owner suspended, or its agent archived.
-- name: get_token_refusal_state
SELECT u.suspended_at, u.suspended_reason, p.archived_at
FROM tokens t JOIN users u ON u.id = t.user_id JOIN profiles p ON p.id = t.profile_id
WHERE t.id = :id;

-- A question's count of valid answers as an answer is hidden (-1) or shown again (+1), and
-- when its newest shown answer came (0: none), which the "recently answered" order and the
-- "no answer yet" filter read (messages_topic_created: the first row of the question's).
-- name: move_message_count
UPDATE topics SET message_count = message_count + :by,
    last_answer_at = COALESCE((SELECT MAX(m.created) FROM messages m
                               WHERE m.topic_id = topics.id AND m.hidden_at IS NULL), 0)
WHERE id = :id;

-- Taking a question down closes it too (agents stop; a lease's next step is refused).
-- name: hide_topic
UPDATE topics SET hidden_at = :now, hidden_reason = :reason, hidden_by = :admin,
       status = 'closed', closed_at = COALESCE(closed_at, :now),
       closed_by = COALESCE(closed_by, :admin), updated = :now
WHERE id = :id AND hidden_at IS NULL;

-- name: unhide_topic
UPDATE topics SET hidden_at = NULL, hidden_reason = NULL, hidden_by = NULL, updated = :now
WHERE id = :id AND hidden_at IS NOT NULL;
