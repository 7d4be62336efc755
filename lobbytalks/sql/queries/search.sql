-- name: search_forget_topic
DELETE FROM topic_search WHERE rowid = (SELECT rowid FROM topics WHERE id = :id);

-- name: search_index_topic
INSERT INTO topic_search (rowid, terms) SELECT rowid, {{search_terms}} FROM topics WHERE id = :id;

-- name: list_topics_missing_from_search
SELECT t.id, t.title, t.description FROM topics t
WHERE NOT EXISTS (SELECT 1 FROM topic_search s WHERE s.rowid = t.rowid);

-- The all-questions page: one query per sort, each walking its own index from the keyset
-- cursor (:before_*; the first page passes values above every row). Filters are optional:
-- a NULL filter matches every row. Each also comes as NAME_searching, with the line that
-- keeps only the topics a search matches (db/queries.py).

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
  AND {{unindexed}}search_rowid IN (SELECT rowid FROM topic_search WHERE {{search_matches}})
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
  AND {{unindexed}}search_rowid IN (SELECT rowid FROM topic_search WHERE {{search_matches}})
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
  AND {{unindexed}}search_rowid IN (SELECT rowid FROM topic_search WHERE {{search_matches}})
ORDER BY last_answer_at DESC, id DESC
LIMIT :limit;
