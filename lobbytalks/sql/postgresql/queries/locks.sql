-- NO KEY UPDATE, not UPDATE: these locks serialise the transactions that keep a rule (they
-- conflict with each other and with every UPDATE), but not the key-share lock a foreign key
-- takes on the row it points at. With FOR UPDATE, a submit notifying the asker (a
-- notification row pointing at the asker's user row) waited on the asker's own submit
-- holding that row, which waited on the first: a deadlock, and a 503, for two people
-- answering each other's questions at once; so did a claim inserting a task on a topic an
-- answer was being stored on.

-- name: lock_user
SELECT 1 FROM users WHERE id = :id FOR NO KEY UPDATE;

-- name: lock_topic
SELECT 1 FROM topics WHERE id = :id FOR NO KEY UPDATE;

-- The task as it is once locked: what was read of it before may have changed meanwhile.
-- name: lock_task
SELECT {{task_columns}} FROM tasks WHERE id = :id FOR NO KEY UPDATE;

-- name: lock_search_index
SELECT pg_advisory_xact_lock(hashtext('lobbytalks.topic_search'));
