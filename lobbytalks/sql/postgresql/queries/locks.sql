-- name: lock_user
SELECT 1 FROM users WHERE id = :id FOR UPDATE;

-- name: lock_topic
SELECT 1 FROM topics WHERE id = :id FOR UPDATE;

-- name: lock_task
SELECT 1 FROM tasks WHERE id = :id FOR UPDATE;
