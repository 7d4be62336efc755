-- Row locks that keep a per-user, per-topic or per-task rule whole while several
-- transactions run at once. On SQLite every write transaction is BEGIN IMMEDIATE under one
-- process-wide lock, so these only read the row; PostgreSQL's versions take FOR NO KEY UPDATE
-- (sql/postgresql/queries/locks.sql). Call one first in the transaction that checks the rule.

-- name: lock_user
SELECT 1 FROM users WHERE id = :id;

-- name: lock_topic
SELECT 1 FROM topics WHERE id = :id;

-- The task as it is once locked: what was read of it before may have changed meanwhile.
-- name: lock_task
SELECT {{task_columns}} FROM tasks WHERE id = :id;

-- Filling the search index at start (search.index_missing): one process at a time, so that
-- two servers starting together on one database do not insert the same rows (PostgreSQL's
-- takes an advisory lock; SQLite's BEGIN IMMEDIATE already serialises it). Its text is its
-- own: a named query's text is how the PostgreSQL override is found, so a bare "SELECT 1"
-- here made every "SELECT 1" on PostgreSQL take the lock instead.
-- name: lock_search_index
SELECT 1 AS search_index_held;
