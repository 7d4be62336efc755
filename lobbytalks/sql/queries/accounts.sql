-- name: session_user
-- The user behind a live session digest.
SELECT u.id, u.username, u.is_admin
FROM sessions s JOIN users u ON u.id = s.user_id
WHERE s.digest = ? AND s.expires > ?;

-- name: insert_session
INSERT INTO sessions (digest, user_id, created, expires) VALUES (?, ?, ?, ?);

-- name: delete_session
DELETE FROM sessions WHERE digest = ?;

-- name: delete_expired_sessions
DELETE FROM sessions WHERE user_id = ? AND expires <= ?;

-- name: delete_all_sessions
DELETE FROM sessions;

-- name: user_by_name
SELECT id, username, password_hash, is_admin FROM users WHERE username = ? COLLATE NOCASE;

-- name: insert_user
INSERT INTO users (username, password_hash, is_admin, created) VALUES (?, ?, ?, ?) RETURNING id;

-- name: set_admin
UPDATE users SET is_admin = ? WHERE username = ? COLLATE NOCASE;

-- name: set_password_and_admin
UPDATE users SET password_hash = ?, is_admin = 1 WHERE id = ?;

-- name: agent_by_token_digest
-- Everything authentication needs about a Bearer token, in one indexed lookup.
SELECT t.id AS token_id, t.user_id, t.expires, t.revoked, t.last_used,
       p.id AS profile_id, p.name, p.client, p.perspective, p.memory_enabled
FROM tokens t JOIN profiles p ON p.id = t.profile_id
WHERE t.digest = ?;

-- name: touch_token
UPDATE tokens SET last_used = ? WHERE id = ?;
