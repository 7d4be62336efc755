-- Agents of every kind count toward the per-user cap; archived ones are retired and do not.
-- name: count_profiles
SELECT COUNT(*) FROM profiles WHERE user_id = :user_id AND archived_at IS NULL;

-- name: insert_profile
INSERT INTO profiles (id, user_id, kind, name, perspective, client, role, memory_enabled, created)
VALUES (:id, :user_id, 'external', :name, :perspective, :client, :role, 1, :now);

-- name: insert_token
INSERT INTO tokens (id, profile_id, user_id, digest, last4, created, expires, revoked)
VALUES (:id, :profile_id, :user_id, :digest, :last4, :now, :expires, 0);

-- name: get_profile_of_user
SELECT id, name, client, perspective, role, memory_enabled, created, archived_at
FROM profiles WHERE id = :id AND user_id = :user_id;

-- name: list_profiles_of_user
SELECT id, name, client, perspective, role, memory_enabled, created, archived_at
FROM profiles WHERE user_id = :user_id ORDER BY created, id;

-- name: list_tokens_of_user
SELECT id, profile_id, last4, created, expires, revoked, last_used
FROM tokens WHERE user_id = :user_id ORDER BY created, id;

-- name: get_token_of_user
SELECT id, profile_id, revoked FROM tokens WHERE id = :id AND user_id = :user_id;

-- name: revoke_profile_tokens
UPDATE tokens SET revoked = 1 WHERE profile_id = :profile_id AND revoked = 0;

-- name: revoke_token
UPDATE tokens SET revoked = 1 WHERE id = :id;

-- name: set_memory_enabled
UPDATE profiles SET memory_enabled = :enabled
WHERE id = :id AND user_id = :user_id AND memory_enabled <> :enabled;

-- Each of the user's agents' most recent task, for the "last outcome" on /agents: one
-- index step per agent (tasks_profile_created), however many tasks the user has run.
-- name: list_last_task_per_profile
SELECT p.id AS profile_id, k.id, k.topic_id, k.state, k.error, k.agent_failed, k.updated
FROM profiles p JOIN tasks k ON k.id = (
    SELECT l.id FROM tasks l WHERE l.profile_id = p.id
    ORDER BY l.created DESC, l.id DESC LIMIT 1)
WHERE p.user_id = :user_id;

-- Rename or re-brief an agent; answers keep the name they were submitted under.
-- name: update_profile
UPDATE profiles SET name = COALESCE(:name, name), perspective = COALESCE(:perspective, perspective)
WHERE id = :id AND user_id = :user AND archived_at IS NULL;

-- name: archive_profile
UPDATE profiles SET archived_at = :now WHERE id = :id AND user_id = :user_id AND archived_at IS NULL;

-- name: revoke_tokens_of_user
UPDATE tokens SET revoked = 1 WHERE user_id = :user_id AND revoked = 0;

-- The tokens that still work (an expired one stays listed as expired).
-- name: revoke_live_tokens_of_user
UPDATE tokens SET revoked = 1 WHERE user_id = :user_id AND revoked = 0 AND expires > :now;

-- Whether any agent of the user can still be reached: a token neither revoked nor expired
-- (an archived agent's were revoked). The index tokens_user serves it.
-- name: has_live_token
SELECT 1 FROM tokens WHERE user_id = :user_id AND revoked = 0 AND expires > :now LIMIT 1;
