-- TRANSITION ONLY: PostgreSQL texts of common queries that are not yet portable, each with
-- the common query's parameters. Delete an entry once its common query is rewritten
-- portably (here: PostgreSQL requires an alias on a subquery in FROM).

-- name: last_task_per_profile
SELECT profile_id, id, topic_id, state, error, updated FROM (
    SELECT k.profile_id, k.id, k.topic_id, k.state, k.error, k.updated,
           ROW_NUMBER() OVER (PARTITION BY k.profile_id ORDER BY k.created DESC, k.id DESC) AS n
    FROM tasks k WHERE k.user_id = ?) AS newest
WHERE n = 1;

-- name: unread_notification_badge
SELECT COUNT(*) FROM (SELECT 1 FROM notifications WHERE user_id = :user AND read_at IS NULL
                      LIMIT :cap) AS unread;
