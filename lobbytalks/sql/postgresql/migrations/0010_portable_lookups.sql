-- Nothing to do on PostgreSQL: SQLite's 0010 replaces its NOCASE unique index on
-- users.username by one on lower(username), which PostgreSQL's 0001 already created.
SELECT 1;
