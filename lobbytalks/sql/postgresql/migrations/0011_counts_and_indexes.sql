-- Each community's member and question counts, kept up to date by the statements that add
-- or remove a membership or a question, in the same transaction, so that listing the
-- communities no longer counts over memberships and topics for every row.
ALTER TABLE communities ADD COLUMN member_count BIGINT NOT NULL DEFAULT 0;
ALTER TABLE communities ADD COLUMN topic_count BIGINT NOT NULL DEFAULT 0;
UPDATE communities SET
    member_count = (SELECT COUNT(*) FROM memberships m WHERE m.community_id = communities.id),
    topic_count = (SELECT COUNT(*) FROM topics t WHERE t.community_id = communities.id);

-- An agent's newest task (the "last outcome" on /agents) without reading all its user's
-- tasks.
CREATE INDEX tasks_profile_created ON tasks (profile_id, created DESC, id DESC);

-- The questions a person asked their agents to take, oldest first (list_topics' "requested").
CREATE INDEX agent_requests_user_created ON agent_requests (user_id, created, topic_id);
