-- PostgreSQL equivalent of sql/migrations/0006_search.sql. The search index is a table
-- keyed by the topic's rowid holding a tsvector of the same prepared text (search.index_terms)
-- under the 'simple' configuration (no stemming, no stop words: like unicode61), with a GIN
-- index for the @@ match.
CREATE TABLE topic_search (
    rowid BIGINT PRIMARY KEY,
    terms tsvector NOT NULL
);
CREATE INDEX topic_search_terms ON topic_search USING GIN (terms);

ALTER TABLE topics ADD COLUMN last_answer_at BIGINT NOT NULL DEFAULT 0;
UPDATE topics SET last_answer_at = COALESCE(
    (SELECT MAX(m.created) FROM messages m WHERE m.topic_id = topics.id), 0);

CREATE INDEX topics_created ON topics (created DESC, id DESC);
CREATE INDEX topics_answers ON topics (message_count DESC, created DESC, id DESC);
CREATE INDEX topics_last_answer ON topics (last_answer_at DESC, id DESC);

-- has_card as 0/1, the integer SQLite's EXISTS gives, so the browse filter compares alike.
CREATE VIEW topic_listing AS
SELECT t.rowid AS search_rowid, t.id, t.title, t.description, t.community_id, t.island_id,
       t.kind, t.created, t.message_count, t.last_answer_at, t.intent, t.version, t.status,
       u.username AS author_name, c.name AS community_name,
       CASE WHEN EXISTS (SELECT 1 FROM answer_cards a
                         WHERE a.topic_id = t.id AND a.state = 'published') THEN 1 ELSE 0 END AS has_card
FROM topics t JOIN users u ON u.id = t.author_id JOIN communities c ON c.id = t.community_id;
