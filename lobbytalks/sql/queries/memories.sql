-- name: count_memories
SELECT COUNT(*) FROM memories WHERE user_id = :user_id AND profile_id = :profile_id;

-- name: insert_memory
INSERT INTO memories (id, user_id, profile_id, message_id, text, state, created, updated)
VALUES (:id, :user_id, :profile_id, :message_id, :text, 'pending', :now, :now);

-- Whether an answer's submit made a memory, for its replay (memories_owner: 30 rows at most).
-- name: memory_of_message
SELECT 1 FROM memories
WHERE user_id = :user_id AND profile_id = :profile_id AND message_id = :message_id;

-- What get_context gives the agent (memories_owner); a question taken down is named by
-- :taken_down, as in its person's garden. One from an answer an admin hid is given to no
-- agent while it stays hidden (the answer is left out of every reading, and hidden for what
-- it said, an injection as much as abuse).
-- name: list_active_memories
SELECT {{memory_text}} AS text
FROM memories m
LEFT JOIN messages k ON k.id = m.message_id
LEFT JOIN topics t ON t.id = k.topic_id
WHERE m.user_id = :user_id AND m.profile_id = :profile_id AND m.state = 'active'
  AND k.hidden_at IS NULL
ORDER BY m.created DESC, m.id DESC LIMIT :limit;

-- The question a memory came from, and the title the memory names it by, none where an
-- admin took it down and the reader did not ask it (a 404 to them: the memory garden links
-- to no such page).
-- name: list_memories_of_user
SELECT m.id, m.profile_id, p.name AS agent_name, m.message_id, m.state, m.created, m.updated,
       CASE WHEN t.hidden_at IS NULL OR t.author_id = :user_id THEN k.topic_id END AS topic_id,
       {{memory_text}} AS text,
       CASE WHEN t.hidden_at IS NULL OR t.author_id = :user_id THEN {{memory_title}} END AS title
FROM memories m JOIN profiles p ON p.id = m.profile_id
LEFT JOIN messages k ON k.id = m.message_id
LEFT JOIN topics t ON t.id = k.topic_id
WHERE m.user_id = :user_id
ORDER BY m.state DESC, m.created DESC, m.id DESC;

-- name: get_memory_of_user
SELECT id, state FROM memories WHERE id = :id AND user_id = :user_id;

-- Confirming one already active changes nothing (and writes nothing).
-- name: activate_memory
UPDATE memories SET state = 'active', updated = :now
WHERE id = :id AND user_id = :user_id AND state = 'pending';

-- name: delete_memory
DELETE FROM memories WHERE id = :id AND user_id = :user_id;
