-- Search on PostgreSQL: topic_search holds a tsvector ('simple' configuration) of the same
-- prepared text as SQLite's FTS5 table; :match is a tsquery text (search.match_query).

-- name: search_index_topic
INSERT INTO topic_search (rowid, terms)
SELECT rowid, to_tsvector('simple', :terms) FROM topics WHERE id = :id;

-- name: browse_newest
SELECT id, title, description, community_id, island_id, created, message_count, last_answer_at,
       intent, version, status, author_name, community_name, has_card
FROM topic_listing
WHERE (created, id) < (:before_created, :before_id)
  AND kind = 'discussion'
  AND (CAST(:community AS text) IS NULL OR community_id = :community)
  AND (CAST(:status AS text) IS NULL OR status = :status)
  AND (CAST(:intent AS text) IS NULL OR intent = :intent)
  AND (CAST(:answered AS bigint) IS NULL OR (CASE WHEN message_count > 0 THEN 1 ELSE 0 END) = :answered)
  AND (CAST(:card AS bigint) IS NULL OR has_card = :card)
  AND (CAST(:match AS text) IS NULL OR search_rowid IN (
      SELECT rowid FROM topic_search WHERE terms @@ to_tsquery('simple', :match)))
ORDER BY created DESC, id DESC
LIMIT :limit;

-- name: browse_most_answers
SELECT id, title, description, community_id, island_id, created, message_count, last_answer_at,
       intent, version, status, author_name, community_name, has_card
FROM topic_listing
WHERE (message_count, created, id) < (:before_count, :before_created, :before_id)
  AND kind = 'discussion'
  AND (CAST(:community AS text) IS NULL OR community_id = :community)
  AND (CAST(:status AS text) IS NULL OR status = :status)
  AND (CAST(:intent AS text) IS NULL OR intent = :intent)
  AND (CAST(:answered AS bigint) IS NULL OR (CASE WHEN message_count > 0 THEN 1 ELSE 0 END) = :answered)
  AND (CAST(:card AS bigint) IS NULL OR has_card = :card)
  AND (CAST(:match AS text) IS NULL OR search_rowid IN (
      SELECT rowid FROM topic_search WHERE terms @@ to_tsquery('simple', :match)))
ORDER BY message_count DESC, created DESC, id DESC
LIMIT :limit;

-- name: browse_recently_answered
SELECT id, title, description, community_id, island_id, created, message_count, last_answer_at,
       intent, version, status, author_name, community_name, has_card
FROM topic_listing
WHERE (last_answer_at, id) < (:before_answer, :before_id)
  AND kind = 'discussion'
  AND (CAST(:community AS text) IS NULL OR community_id = :community)
  AND (CAST(:status AS text) IS NULL OR status = :status)
  AND (CAST(:intent AS text) IS NULL OR intent = :intent)
  AND (CAST(:answered AS bigint) IS NULL OR (CASE WHEN message_count > 0 THEN 1 ELSE 0 END) = :answered)
  AND (CAST(:card AS bigint) IS NULL OR has_card = :card)
  AND (CAST(:match AS text) IS NULL OR search_rowid IN (
      SELECT rowid FROM topic_search WHERE terms @@ to_tsquery('simple', :match)))
ORDER BY last_answer_at DESC, id DESC
LIMIT :limit;
