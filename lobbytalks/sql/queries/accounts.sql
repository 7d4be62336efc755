-- The user behind a live session digest.
-- name: get_session_user
SELECT u.id, u.username, u.is_admin
FROM sessions s JOIN users u ON u.id = s.user_id
WHERE s.digest = :digest AND s.expires > :now;

-- name: insert_session
INSERT INTO sessions (digest, user_id, created, expires) VALUES (:digest, :user_id, :created, :expires);

-- name: delete_session
DELETE FROM sessions WHERE digest = :digest;

-- name: delete_expired_sessions
DELETE FROM sessions WHERE user_id = :user_id AND expires <= :now;

-- name: delete_all_sessions
DELETE FROM sessions;

-- Log a user out everywhere (password reset, "log out everywhere").
-- name: delete_user_sessions
DELETE FROM sessions WHERE user_id = :user_id;

-- Keep a user's newest N sessions (by creation, then insertion order); end the rest.
-- name: delete_sessions_beyond
DELETE FROM sessions
WHERE user_id = :user_id AND rowid NOT IN (
    SELECT rowid FROM sessions WHERE user_id = :user_id
    ORDER BY created DESC, rowid DESC LIMIT :keep);

-- name: count_live_sessions
SELECT COUNT(*) FROM sessions WHERE user_id = :user_id AND expires > :now;

-- name: get_user_by_name
SELECT id, username, password_hash, is_admin, deleted_at FROM users
WHERE lower(username) = lower(:username);

-- name: insert_user
INSERT INTO users (username, password_hash, is_admin, created) VALUES (:username, :password_hash, :is_admin, :now) RETURNING id;

-- The configured admin, unless an account of that name already exists: two servers
-- starting together on one new database both get here, and the second finds the first's.
-- name: insert_admin_if_absent
INSERT INTO users (username, password_hash, is_admin, created) VALUES (:username, :password_hash, 1, :now)
ON CONFLICT DO NOTHING RETURNING id;

-- name: set_admin
UPDATE users SET is_admin = :is_admin WHERE lower(username) = lower(:username);

-- name: get_password_hash
SELECT password_hash FROM users WHERE id = :id;

-- (never on a deleted account: a password set there would bring its login back)
-- name: set_password_hash
UPDATE users SET password_hash = :password_hash WHERE id = :id AND deleted_at IS NULL;

-- Re-hash the same password, unless the stored hash changed since it was checked.
-- name: replace_password_hash
UPDATE users SET password_hash = :password_hash WHERE id = :id AND password_hash = :stored;

-- Everything authentication needs about a Bearer token, in one indexed lookup.
-- name: get_agent_by_token_digest
SELECT t.id AS token_id, t.user_id, t.expires, t.revoked, t.last_used,
       p.id AS profile_id, p.name, p.client, p.perspective, p.memory_enabled
FROM tokens t JOIN profiles p ON p.id = t.profile_id
WHERE t.digest = :digest;

-- name: touch_token
UPDATE tokens SET last_used = :now WHERE id = :id;

-- A forgotten password: the account named, by its name or its confirmed address, is marked
-- for the mailer (services.password_reset). Nothing is marked for an account without a
-- confirmed address (or whose owner removed their address), or a suspended one, and the
-- caller is not told which it was. The address is the one confirmed last: a new one
-- saved since, not confirmed (which takes the password), does not take its place.
-- name: queue_password_reset_by_name
UPDATE users SET password_reset_due = :now
WHERE lower(username) = lower(:username) AND email <> '' AND email_confirmed <> ''
  AND suspended_at IS NULL;

-- name: queue_password_reset_by_email
UPDATE users SET password_reset_due = :now
WHERE lower(email_confirmed) = lower(:email) AND email_confirmed <> '' AND email <> ''
  AND suspended_at IS NULL;

-- name: list_due_password_resets
SELECT id, password_reset_due AS due FROM users WHERE password_reset_due > 0 ORDER BY id
LIMIT :limit;

-- name: claim_password_reset
UPDATE users SET password_reset_due = 0 WHERE id = :id AND password_reset_due = :due;

-- What a reset link is signed over, and where it goes: the password hash and the address
-- confirmed last ('' when the owner removed their address).
-- name: get_password_reset_state
SELECT username, password_hash, suspended_at,
       CASE WHEN email <> '' THEN email_confirmed ELSE '' END AS email
FROM users WHERE id = :id;
