-- Search on PostgreSQL: topic_search holds a tsvector ('simple' configuration) of the
-- same prepared text as SQLite's FTS5 table, and :match is a tsquery text
-- (search.match_query). Same names and parameters as the common queries.

-- name: list_browse_newest
SELECT id, title, description, community_id, island_id, created, message_count, last_answer_at,
       intent, version, status, author_name, community_name, has_card
FROM topic_listing
WHERE (created, id) < (:before_created, :before_id)
  AND kind = 'discussion'
  AND (:community IS NULL OR community_id = :community)
  AND (:status IS NULL OR status = :status)
  AND (:intent IS NULL OR intent = :intent)
  AND (:answered IS NULL OR (CASE WHEN message_count > 0 THEN 1 ELSE 0 END) = :answered)
  AND (:card IS NULL OR has_card = :card)
  AND (:match IS NULL OR search_rowid IN (SELECT rowid FROM topic_search WHERE terms @@ to_tsquery('simple', :match)))
ORDER BY created DESC, id DESC
LIMIT :limit;

-- name: list_browse_most_answers
SELECT id, title, description, community_id, island_id, created, message_count, last_answer_at,
       intent, version, status, author_name, community_name, has_card
FROM topic_listing
WHERE (message_count, created, id) < (:before_count, :before_created, :before_id)
  AND kind = 'discussion'
  AND (:community IS NULL OR community_id = :community)
  AND (:status IS NULL OR status = :status)
  AND (:intent IS NULL OR intent = :intent)
  AND (:answered IS NULL OR (CASE WHEN message_count > 0 THEN 1 ELSE 0 END) = :answered)
  AND (:card IS NULL OR has_card = :card)
  AND (:match IS NULL OR search_rowid IN (SELECT rowid FROM topic_search WHERE terms @@ to_tsquery('simple', :match)))
ORDER BY message_count DESC, created DESC, id DESC
LIMIT :limit;

-- name: list_browse_recently_answered
SELECT id, title, description, community_id, island_id, created, message_count, last_answer_at,
       intent, version, status, author_name, community_name, has_card
FROM topic_listing
WHERE (last_answer_at, id) < (:before_answer, :before_id)
  AND kind = 'discussion'
  AND (:community IS NULL OR community_id = :community)
  AND (:status IS NULL OR status = :status)
  AND (:intent IS NULL OR intent = :intent)
  AND (:answered IS NULL OR (CASE WHEN message_count > 0 THEN 1 ELSE 0 END) = :answered)
  AND (:card IS NULL OR has_card = :card)
  AND (:match IS NULL OR search_rowid IN (SELECT rowid FROM topic_search WHERE terms @@ to_tsquery('simple', :match)))
ORDER BY last_answer_at DESC, id DESC
LIMIT :limit;

-- name: list_community_topics_new
SELECT t.id, t.title, t.description, t.community_id, t.island_id, t.created,
       t.message_count, t.intent, t.version, t.status, u.username AS author_name,
       CASE WHEN EXISTS (SELECT 1 FROM memberships m
                         WHERE m.community_id = t.community_id AND m.user_id = :viewer)
            THEN 1 ELSE 0 END AS joined
FROM topics t JOIN users u ON u.id = t.author_id
WHERE t.community_id = :community
  AND (:status IS NULL OR t.status = :status)
  AND (:match IS NULL OR t.rowid IN (SELECT rowid FROM topic_search WHERE terms @@ to_tsquery('simple', :match)))
ORDER BY t.created DESC, t.id DESC
LIMIT :limit OFFSET :offset;

-- name: list_community_topics_old
SELECT t.id, t.title, t.description, t.community_id, t.island_id, t.created,
       t.message_count, t.intent, t.version, t.status, u.username AS author_name,
       CASE WHEN EXISTS (SELECT 1 FROM memberships m
                         WHERE m.community_id = t.community_id AND m.user_id = :viewer)
            THEN 1 ELSE 0 END AS joined
FROM topics t JOIN users u ON u.id = t.author_id
WHERE t.community_id = :community
  AND (:status IS NULL OR t.status = :status)
  AND (:match IS NULL OR t.rowid IN (SELECT rowid FROM topic_search WHERE terms @@ to_tsquery('simple', :match)))
ORDER BY t.created ASC, t.id ASC
LIMIT :limit OFFSET :offset;

-- name: list_community_topics_active
SELECT t.id, t.title, t.description, t.community_id, t.island_id, t.created,
       t.message_count, t.intent, t.version, t.status, u.username AS author_name,
       CASE WHEN EXISTS (SELECT 1 FROM memberships m
                         WHERE m.community_id = t.community_id AND m.user_id = :viewer)
            THEN 1 ELSE 0 END AS joined
FROM topics t JOIN users u ON u.id = t.author_id
WHERE t.community_id = :community
  AND (:status IS NULL OR t.status = :status)
  AND (:match IS NULL OR t.rowid IN (SELECT rowid FROM topic_search WHERE terms @@ to_tsquery('simple', :match)))
ORDER BY t.message_count DESC, t.created DESC, t.id DESC
LIMIT :limit OFFSET :offset;

-- name: search_index_topic
INSERT INTO topic_search (rowid, terms) SELECT rowid, to_tsvector('simple', :terms) FROM topics WHERE id = :id;
