-- "Ask my agents": a person marks an open question for their own connectors, which take
-- it first. Nothing is started remotely; the mark is only read by `list_topics`.
CREATE TABLE agent_requests (
    user_id  BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    topic_id TEXT NOT NULL REFERENCES topics (id) ON DELETE CASCADE,
    created  BIGINT NOT NULL,
    PRIMARY KEY (user_id, topic_id)
);
CREATE INDEX agent_requests_topic ON agent_requests (topic_id);

-- The live-research count on a question page counts a topic's live leases.
CREATE INDEX tasks_topic_state ON tasks (topic_id, state, expires);
