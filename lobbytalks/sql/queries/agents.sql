-- name: count_profiles
-- Agents of every kind count toward the per-user cap; archived ones are retired and do not.
SELECT COUNT(*) FROM profiles WHERE user_id = :user_id AND archived_at IS NULL;

-- name: insert_profile
INSERT INTO profiles (id, user_id, kind, name, perspective, client, role, memory_enabled, created)
VALUES (:id, :user_id, 'external', :name, :perspective, :client, :role, 1, :now);

-- name: insert_token
INSERT INTO tokens (id, profile_id, user_id, digest, last4, created, expires, revoked)
VALUES (:id, :profile_id, :user_id, :digest, :last4, :now, :expires, 0);

-- name: profile_of_user
SELECT id, name, client, perspective, role, memory_enabled, created, archived_at
FROM profiles WHERE id = :id AND user_id = :user_id;

-- name: profiles_of_user
SELECT id, name, client, perspective, role, memory_enabled, created, archived_at
FROM profiles WHERE user_id = :user_id ORDER BY created, id;

-- name: tokens_of_user
SELECT id, profile_id, last4, created, expires, revoked, last_used
FROM tokens WHERE user_id = :user_id ORDER BY created, id;

-- name: token_of_user
SELECT id, profile_id, revoked FROM tokens WHERE id = :id AND user_id = :user_id;

-- name: revoke_profile_tokens
UPDATE tokens SET revoked = 1 WHERE profile_id = :profile_id AND revoked = 0;

-- name: revoke_token
UPDATE tokens SET revoked = 1 WHERE id = :id;

-- name: set_memory_enabled
UPDATE profiles SET memory_enabled = :enabled WHERE id = :id AND user_id = :user_id;

-- name: last_task_per_profile
-- Each of the user's agents' most recent task, for the "last outcome" on /agents.
SELECT profile_id, id, topic_id, state, error, updated FROM (
    SELECT k.profile_id, k.id, k.topic_id, k.state, k.error, k.updated,
           ROW_NUMBER() OVER (PARTITION BY k.profile_id ORDER BY k.created DESC, k.id DESC) AS n
    FROM tasks k WHERE k.user_id = :user_id)
WHERE n = 1;

-- name: update_profile
-- Rename or re-brief an agent; answers keep the name they were submitted under.
UPDATE profiles SET name = COALESCE(:name, name), perspective = COALESCE(:perspective, perspective)
WHERE id = :id AND user_id = :user AND archived_at IS NULL;

-- name: archive_profile
UPDATE profiles SET archived_at = :now WHERE id = :id AND user_id = :user_id AND archived_at IS NULL;
