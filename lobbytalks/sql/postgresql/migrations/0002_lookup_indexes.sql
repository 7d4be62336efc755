-- Lookups the benchmark found unindexed.
-- Settling dead connections finds a user's revoked or expired tokens on every claim, every
-- manage view, rotation and revocation: without this it scanned the whole tokens table.
CREATE INDEX tokens_user ON tokens (user_id, revoked, expires);

-- Active memories are read newest first with the id as tie-break: no temporary sort.
DROP INDEX memories_owner;
CREATE INDEX memories_owner ON memories (user_id, profile_id, state, created DESC, id DESC);
