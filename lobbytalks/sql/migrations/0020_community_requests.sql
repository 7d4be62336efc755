-- A community created with a requestId (the page sends one per form), as a question is
-- (0018): the same request sent again, after a response lost on the way, gets the community
-- it made rather than a second of the same name (which would hold one of the creator's five
-- for good: a community is never deleted).
ALTER TABLE communities ADD COLUMN request_id TEXT;
ALTER TABLE communities ADD COLUMN request_hash TEXT;
CREATE UNIQUE INDEX communities_request ON communities (owner_id, request_id) WHERE request_id IS NOT NULL;
