-- An admin takes a question down (spam, a phishing address in its title): it is closed,
-- leaves every listing, search and profile, and its page and reads answer 404 to all but
-- its asker and the admins. Shown again, it comes back closed.
ALTER TABLE topics ADD COLUMN hidden_at INTEGER;
ALTER TABLE topics ADD COLUMN hidden_reason TEXT;
ALTER TABLE topics ADD COLUMN hidden_by INTEGER REFERENCES users (id);

-- The all-questions page lists what is not hidden.
DROP VIEW topic_listing;
CREATE VIEW topic_listing AS
SELECT t.rowid AS search_rowid, t.id, t.title, t.description, t.community_id, t.island_id,
       t.kind, t.created, t.message_count, t.last_answer_at, t.intent, t.version, t.status,
       u.username AS author_name, c.name AS community_name,
       CASE WHEN EXISTS (SELECT 1 FROM answer_cards a
                         WHERE a.topic_id = t.id AND a.state = 'published')
            THEN 1 ELSE 0 END AS has_card
FROM topics t JOIN users u ON u.id = t.author_id JOIN communities c ON c.id = t.community_id
WHERE t.hidden_at IS NULL;
