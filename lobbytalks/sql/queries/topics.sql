-- name: get_topic
SELECT {{topic_columns}}
FROM topics t JOIN users u ON u.id = t.author_id
WHERE t.id = :id;

-- The topic as get_topic reads it, whether :user_id is a member of its community and how
-- many of its shown answers are theirs (messages_topic_user): what a task action checks
-- first, in one statement (one round trip on PostgreSQL).
-- name: get_topic_for_member
SELECT {{topic_columns}},
       CASE WHEN EXISTS (SELECT 1 FROM memberships m
                         WHERE m.community_id = t.community_id AND m.user_id = :user_id)
            THEN 1 ELSE 0 END AS member,
       (SELECT COUNT(*) FROM messages a
        WHERE a.topic_id = t.id AND a.user_id = :user_id AND a.hidden_at IS NULL) AS own_answers
FROM topics t JOIN users u ON u.id = t.author_id
WHERE t.id = :id;

-- name: get_island
SELECT 1 FROM islands WHERE id = :id;

-- name: list_islands
SELECT id, name, description FROM islands ORDER BY position;

-- name: insert_topic
INSERT INTO topics (id, community_id, island_id, author_id, kind, intent, original_title,
                    title, description, status, version, created, updated, request_id,
                    request_hash)
VALUES (:id, :community, :island, :author, 'discussion', :intent, :original_title,
        :title, :description, 'open', 1, :now, :now, :request_id, :request_hash);

-- The times of an asker's newest questions since :since, at most :amount of them
-- (topics_author_created): the day's questions, counted where they are kept.
-- name: recent_questions_by
SELECT created FROM topics WHERE author_id = :author AND created > :since
ORDER BY created DESC LIMIT :amount;

-- The question an asker's requestId made (topics_request).
-- name: get_topic_by_request
SELECT id, request_hash FROM topics WHERE author_id = :author AND request_id = :request_id;

-- name: insert_question_version
INSERT INTO question_versions (topic_id, version, title, public_context, private_key_id,
                               private_context, note, created)
VALUES (:topic_id, :version, :title, :public_context, :private_key_id, :private_context, :note, :now);

-- name: get_question_version
SELECT topic_id, version, title, public_context, private_key_id, private_context, note, created
FROM question_versions WHERE topic_id = :topic_id AND version = :version;

-- name: list_question_versions
SELECT version, title, public_context, note, created,
       CASE WHEN private_context IS NOT NULL THEN 1 ELSE 0 END AS has_private
FROM question_versions WHERE topic_id = :topic_id ORDER BY version;

-- name: update_topic_version
UPDATE topics SET title = :title, description = :description, version = :version, updated = :now WHERE id = :id;

-- name: close_topic
UPDATE topics SET status = 'closed', closed_at = :now, closed_by = :closed_by, updated = :now
WHERE id = :id AND status = 'open';

-- Newest open discussions (for agents, with room for an answer: :room, the cap on a
-- question's answers; a full one could only be refused to the agent that claims it; NULL
-- for the pages, which show it), optionally in one
-- community, with the viewer's membership and the connector's extension fields (asked by
-- the viewer, when the viewer asked their own agents to take it, already answered by one of
-- the viewer's agents, in the question's current version).
-- name: list_open_topics_newest
SELECT t.id, t.title, t.description, t.community_id, t.created, t.message_count,
       t.intent, t.version,
       CASE WHEN t.author_id = :viewer THEN 1 ELSE 0 END AS asked_by_me,
       CASE WHEN EXISTS (SELECT 1 FROM memberships m
                         WHERE m.community_id = t.community_id AND m.user_id = :viewer)
            THEN 1 ELSE 0 END AS joined,
       (SELECT r.created FROM agent_requests r WHERE r.topic_id = t.id AND r.user_id = :viewer)
           AS requested_at,
       CASE WHEN EXISTS (SELECT 1 FROM messages g WHERE g.topic_id = t.id AND g.user_id = :viewer
                                                   AND g.question_version = t.version)
            THEN 1 ELSE 0 END AS answered_by_mine
FROM topics t
WHERE t.status = 'open' AND t.kind = 'discussion' AND (:room IS NULL OR t.message_count < :room)
  AND (:community IS NULL OR t.community_id = :community)
ORDER BY t.created DESC, t.id DESC
LIMIT :limit;

-- The open discussions with room (:room) the viewer asked their agents to take, oldest
-- request first. Walks
-- the viewer's requests (agent_requests_user_created), never the open topics: CROSS JOIN
-- keeps SQLite from starting at topics, and is a plain join elsewhere.
-- name: list_open_topics_requested
SELECT t.id, t.title, t.description, t.community_id, t.created, t.message_count,
       t.intent, t.version,
       CASE WHEN t.author_id = :viewer THEN 1 ELSE 0 END AS asked_by_me,
       CASE WHEN EXISTS (SELECT 1 FROM memberships m
                         WHERE m.community_id = t.community_id AND m.user_id = :viewer)
            THEN 1 ELSE 0 END AS joined,
       r.created AS requested_at,
       CASE WHEN EXISTS (SELECT 1 FROM messages g WHERE g.topic_id = t.id AND g.user_id = :viewer
                                                   AND g.question_version = t.version)
            THEN 1 ELSE 0 END AS answered_by_mine
FROM agent_requests r CROSS JOIN topics t
WHERE t.id = r.topic_id AND r.user_id = :viewer AND t.status = 'open' AND t.kind = 'discussion'
  AND (:room IS NULL OR t.message_count < :room) AND (:community IS NULL OR t.community_id = :community)
ORDER BY r.created, r.topic_id
LIMIT :limit;

-- A person's request for their agents, and whether one of them has tried the question since
-- it was made and ended with no answer (failed or ran out): asking again then has something
-- to do (a connector tries a question asked for after its last try once more).
-- name: get_agent_request
SELECT EXISTS (SELECT 1 FROM tasks k
               WHERE k.user_id = r.user_id AND k.topic_id = r.topic_id AND k.updated >= r.created
                 AND (k.state IN ('failed', 'expired') OR k.state = 'leased' AND k.expires <= :now)
              ) AS tried
FROM agent_requests r WHERE r.user_id = :user_id AND r.topic_id = :topic_id;

-- Asking again moves the request's time: a connector that tried before it tries once more.
-- name: insert_agent_request
INSERT INTO agent_requests (user_id, topic_id, created) VALUES (:user_id, :topic_id, :now)
ON CONFLICT (user_id, topic_id) DO UPDATE SET created = excluded.created;

-- name: delete_agent_request
DELETE FROM agent_requests WHERE user_id = :user_id AND topic_id = :topic_id;

-- Agents researching a question right now: leased, not yet past expiry, and held by a
-- member of its community (a lease left behind by one who left can be neither renewed
-- nor submitted, as count_live_leases says; tasks_topic_state).
-- name: count_live_leases_on_topic
SELECT COUNT(*) FROM tasks k JOIN topics t ON t.id = k.topic_id
WHERE k.topic_id = :topic_id AND k.state = 'leased' AND k.expires > :now
  AND EXISTS (SELECT 1 FROM memberships m
              WHERE m.community_id = t.community_id AND m.user_id = k.user_id);

-- A community's questions (not those an admin took down), one query per sort order; a
-- NULL :status matches every row
-- (the index on (community_id, created, id) serves the first two). Each also comes as
-- NAME_searching, with the line that keeps only the topics a search matches (db/queries.py).
-- name: list_community_topics_new
SELECT t.id, t.title, t.description, t.community_id, t.island_id, t.created,
       t.message_count, t.intent, t.version, t.status, u.username AS author_name,
       CASE WHEN EXISTS (SELECT 1 FROM memberships m
                         WHERE m.community_id = t.community_id AND m.user_id = :viewer)
            THEN 1 ELSE 0 END AS joined
FROM topics t JOIN users u ON u.id = t.author_id
WHERE t.community_id = :community AND t.hidden_at IS NULL
  AND (:status IS NULL OR t.status = :status)
  AND {{unindexed}}t.rowid IN (SELECT rowid FROM topic_search WHERE {{search_matches}})
ORDER BY t.created DESC, t.id DESC
LIMIT :limit OFFSET :offset;

-- name: list_community_topics_old
SELECT t.id, t.title, t.description, t.community_id, t.island_id, t.created,
       t.message_count, t.intent, t.version, t.status, u.username AS author_name,
       CASE WHEN EXISTS (SELECT 1 FROM memberships m
                         WHERE m.community_id = t.community_id AND m.user_id = :viewer)
            THEN 1 ELSE 0 END AS joined
FROM topics t JOIN users u ON u.id = t.author_id
WHERE t.community_id = :community AND t.hidden_at IS NULL
  AND (:status IS NULL OR t.status = :status)
  AND {{unindexed}}t.rowid IN (SELECT rowid FROM topic_search WHERE {{search_matches}})
ORDER BY t.created ASC, t.id ASC
LIMIT :limit OFFSET :offset;

-- name: list_community_topics_active
SELECT t.id, t.title, t.description, t.community_id, t.island_id, t.created,
       t.message_count, t.intent, t.version, t.status, u.username AS author_name,
       CASE WHEN EXISTS (SELECT 1 FROM memberships m
                         WHERE m.community_id = t.community_id AND m.user_id = :viewer)
            THEN 1 ELSE 0 END AS joined
FROM topics t JOIN users u ON u.id = t.author_id
WHERE t.community_id = :community AND t.hidden_at IS NULL
  AND (:status IS NULL OR t.status = :status)
  AND {{unindexed}}t.rowid IN (SELECT rowid FROM topic_search WHERE {{search_matches}})
ORDER BY t.message_count DESC, t.created DESC, t.id DESC
LIMIT :limit OFFSET :offset;
