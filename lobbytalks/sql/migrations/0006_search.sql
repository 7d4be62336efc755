-- Search and browse (services/search.py explains the indexed form of the text).
-- The index is filled by the application in the same transaction as each question; a
-- database from before this migration is indexed at the next start (search.index_missing).
CREATE VIRTUAL TABLE topic_search USING fts5 (terms, tokenize = 'unicode61 remove_diacritics 2');

-- When the newest answer arrived (0: none yet), kept with message_count on every insert.
ALTER TABLE topics ADD COLUMN last_answer_at INTEGER NOT NULL DEFAULT 0;
UPDATE topics SET last_answer_at = COALESCE(
    (SELECT MAX(m.created) FROM messages m WHERE m.topic_id = topics.id), 0);

-- One index behind each sort of the all-questions page, for keyset pagination.
CREATE INDEX topics_created ON topics (created DESC, id DESC);
CREATE INDEX topics_answers ON topics (message_count DESC, created DESC, id DESC);
CREATE INDEX topics_last_answer ON topics (last_answer_at DESC, id DESC);

-- What a listing shows of a question: its public fields, author, community and whether a
-- card is published. The browse queries read it (SQLite flattens it into each query, so
-- their indexes still apply).
CREATE VIEW topic_listing AS
SELECT t.rowid AS search_rowid, t.id, t.title, t.description, t.community_id, t.island_id,
       t.kind, t.created, t.message_count, t.last_answer_at, t.intent, t.version, t.status,
       u.username AS author_name, c.name AS community_name,
       EXISTS (SELECT 1 FROM answer_cards a WHERE a.topic_id = t.id AND a.state = 'published') AS has_card
FROM topics t JOIN users u ON u.id = t.author_id JOIN communities c ON c.id = t.community_id;
