-- Lookups written the same way on every database engine.

-- Usernames stay unique regardless of case, now through lower(), which the queries compare
-- with: usernames are ASCII letters, digits and "_" (models/web.py), where SQLite's lower()
-- and its NOCASE collation agree.
DROP INDEX users_username;
CREATE UNIQUE INDEX users_username ON users (lower(username));

-- has_card as the integer 1 or 0, not a boolean expression (the browse filters compare it
-- with an integer parameter).
DROP VIEW topic_listing;
CREATE VIEW topic_listing AS
SELECT t.rowid AS search_rowid, t.id, t.title, t.description, t.community_id, t.island_id,
       t.kind, t.created, t.message_count, t.last_answer_at, t.intent, t.version, t.status,
       u.username AS author_name, c.name AS community_name,
       CASE WHEN EXISTS (SELECT 1 FROM answer_cards a
                         WHERE a.topic_id = t.id AND a.state = 'published')
            THEN 1 ELSE 0 END AS has_card
FROM topics t JOIN users u ON u.id = t.author_id JOIN communities c ON c.id = t.community_id;
