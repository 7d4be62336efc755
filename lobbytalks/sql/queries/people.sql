-- Whether someone is an admin or suspended is public (a name like "administrator" is no
-- admin; a suspended account's questions stay listed); why they were suspended is not.
-- (a deleted account has no profile: its questions and answers name it, nothing more)
-- name: get_person_by_name
SELECT id, username, created, is_admin,
       CASE WHEN suspended_at IS NULL THEN 0 ELSE 1 END AS suspended
FROM users WHERE lower(username) = lower(:username) AND deleted_at IS NULL;

-- A person's newest questions, public fields only (anyone may read them), and their
-- published cards: none of a question an admin took down.
-- name: list_questions_by_author
SELECT t.id, t.title, t.description, t.community_id, t.created, t.message_count, t.intent,
       t.version, t.status, c.name AS community_name
FROM topics t JOIN communities c ON c.id = t.community_id
WHERE t.author_id = :author AND t.kind = 'discussion' AND t.hidden_at IS NULL
  AND t.status = :status
ORDER BY t.created DESC, t.id DESC
LIMIT :limit OFFSET :offset;

-- How many of a person's questions a profile lists, of each state (its lists stop at the
-- newest few).
-- name: count_questions_by_author
SELECT COUNT(CASE WHEN status = 'open' THEN 1 END) AS open,
       COUNT(CASE WHEN status = 'closed' THEN 1 END) AS closed
FROM topics
WHERE author_id = :author AND kind = 'discussion' AND hidden_at IS NULL;

-- name: list_published_cards_by_author
SELECT a.id, a.topic_id, a.published, t.title
FROM topics t CROSS JOIN answer_cards a
WHERE a.topic_id = t.id AND t.author_id = :author AND a.state = 'published'
  AND t.hidden_at IS NULL
ORDER BY a.published DESC, a.id DESC
LIMIT :limit;

-- How many answer cards a person has published (a profile lists the newest few).
-- name: count_published_cards_by_author
SELECT COUNT(*) FROM topics t CROSS JOIN answer_cards a
WHERE a.topic_id = t.id AND t.author_id = :author AND a.state = 'published'
  AND t.hidden_at IS NULL;

-- name: list_questions_for_export
SELECT t.id, t.community_id, t.intent, t.original_title, t.title, t.description, t.status,
       t.version, t.created, t.closed_at
FROM topics t WHERE t.author_id = :author ORDER BY t.created, t.id;

-- name: list_answers_for_export
SELECT id, topic_id, profile_id, reply_to, name, model, text, reasoning_summary, uncertainties,
       conditions, sources, tool_runs, provenance, question_version, share_public, created
FROM messages WHERE user_id = :user ORDER BY created, id;

-- name: list_agents_for_export
SELECT id, name, perspective, client, role, memory_enabled, created
FROM profiles WHERE user_id = :user ORDER BY created, id;

-- Token metadata only: never the digest, nor the last characters of a token.
-- name: list_tokens_for_export
SELECT id, profile_id, created, expires, revoked, last_used
FROM tokens WHERE user_id = :user ORDER BY created, id;

-- The communities a person joined, with the ones they created marked.
-- name: list_memberships_for_export
SELECT c.id, c.name, m.created AS joined, CASE WHEN c.owner_id = :user THEN 1 ELSE 0 END AS owned
FROM memberships m JOIN communities c ON c.id = m.community_id
WHERE m.user_id = :user ORDER BY m.created, c.id;
