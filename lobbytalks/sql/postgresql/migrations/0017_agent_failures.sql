-- Who wrote a failed task's reason: 1 when its agent did (fail_task), 0 when the server or
-- the owner ended it (a cancel, a revoked token, an archived agent, a question taken down).
-- An agent may send the server's own fixed sentences; the owner's pages and a repeated
-- cancel must not take those for the server's. Rows from before: 0019 marks them.
ALTER TABLE tasks ADD COLUMN agent_failed BIGINT NOT NULL DEFAULT 0;
