-- Moves whenever a community is added (none is ever deleted, no name changes): what the
-- grouping of names that read alike is kept by (services/lookalikes.py).
-- name: communities_version
SELECT COUNT(*), MAX(created) FROM communities;

-- name: list_community_names_and_makers
SELECT c.id, c.name, u.username AS owner
FROM communities c LEFT JOIN users u ON u.id = c.owner_id;

-- One page of communities with their counts (kept by the statements below) and the
-- viewer's relation (viewer 0 = anonymous).
-- name: list_communities
SELECT c.id, c.name, c.description,
       c.member_count, c.topic_count,
       CASE WHEN EXISTS (SELECT 1 FROM memberships m
                         WHERE m.community_id = c.id AND m.user_id = :viewer)
            THEN 1 ELSE 0 END AS joined,
       CASE WHEN c.owner_id IS NOT NULL AND c.owner_id = :viewer THEN 1 ELSE 0 END AS owned
FROM communities c
WHERE :joined_only = 0
   OR EXISTS (SELECT 1 FROM memberships m WHERE m.community_id = c.id AND m.user_id = :viewer)
ORDER BY c.created, c.id
LIMIT :limit OFFSET :offset;

-- name: get_community
SELECT c.id, c.name, c.description,
       c.member_count, c.topic_count,
       CASE WHEN EXISTS (SELECT 1 FROM memberships m
                         WHERE m.community_id = c.id AND m.user_id = :viewer)
            THEN 1 ELSE 0 END AS joined,
       CASE WHEN c.owner_id IS NOT NULL AND c.owner_id = :viewer THEN 1 ELSE 0 END AS owned
FROM communities c WHERE c.id = :id;

-- name: get_community_owner
SELECT owner_id FROM communities WHERE id = :id;

-- name: count_owned_communities
SELECT COUNT(*) FROM communities WHERE owner_id = :user_id;

-- name: insert_community
INSERT INTO communities (id, name, description, owner_id, created, request_id, request_hash)
VALUES (:id, :name, :description, :owner_id, :now, :request_id, :request_hash);

-- The community a creator's requestId made (communities_request).
-- name: get_community_by_request
SELECT id, request_hash FROM communities WHERE owner_id = :owner_id AND request_id = :request_id;

-- name: update_community_description
UPDATE communities SET description = :description WHERE id = :id;

-- name: insert_membership
INSERT INTO memberships (community_id, user_id, created) VALUES (:community_id, :user_id, :now)
ON CONFLICT (community_id, user_id) DO NOTHING;

-- name: delete_membership
DELETE FROM memberships WHERE community_id = :community_id AND user_id = :user_id;

-- The counts the listings show, moved in the transaction that adds or removes the row
-- (:delta is +1 or -1).
-- name: add_to_community_members
UPDATE communities SET member_count = member_count + :delta WHERE id = :id;

-- name: add_to_community_topics
UPDATE communities SET topic_count = topic_count + :delta WHERE id = :id;

-- name: get_membership
SELECT 1 FROM memberships WHERE community_id = :community_id AND user_id = :user_id;

-- Who made each community the viewer has joined, and when (to tell same-named ones apart).
-- name: list_joined_community_origins
SELECT c.id, c.created, u.username AS owner
FROM communities c
JOIN memberships m ON m.community_id = c.id AND m.user_id = :viewer
LEFT JOIN users u ON u.id = c.owner_id;
