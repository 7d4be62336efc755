-- Leases past their expiry become expired (request-driven settlement).
-- name: settle_expired_leases
UPDATE tasks SET state = 'expired', error = :expired, updated = :now
WHERE user_id = :user AND state = 'leased' AND expires <= :now
RETURNING id, user_id, topic_id;

-- Leases held by a revoked or expired token can never be completed: fail them.
-- name: settle_dead_connections
UPDATE tasks SET state = 'failed', error = :reason, updated = :now
WHERE user_id = :user AND state = 'leased'
  AND token_id IN (SELECT id FROM tokens WHERE user_id = :user AND (revoked = 1 OR expires <= :now))
RETURNING id, user_id, topic_id;

-- Whether either settlement above has a lease to end (read before taking any lock).
-- name: settlement_due
SELECT 1 FROM tasks
WHERE user_id = :user AND state = 'leased'
  AND (expires <= :now
       OR token_id IN (SELECT id FROM tokens WHERE user_id = :user AND (revoked = 1 OR expires <= :now)))
LIMIT 1;

-- Every leased task of a person's agents (a suspension, every token revoked at once).
-- name: fail_leased_of_user
UPDATE tasks SET state = 'failed', error = :reason, updated = :now
WHERE user_id = :user AND state = 'leased';

-- The leases on a question an admin took down (tasks_topic_state).
-- name: fail_leased_on_topic
UPDATE tasks SET state = 'failed', error = :reason, updated = :now
WHERE topic_id = :topic AND state = 'leased';

-- A member's leases left in a community they left end as they join it again: while they
-- were out those did not count against their three (count_live_leases).
-- name: fail_leased_of_user_in_community
UPDATE tasks SET state = 'failed', error = :reason, updated = :now
WHERE user_id = :user AND state = 'leased'
  AND topic_id IN (SELECT id FROM topics WHERE community_id = :community);

-- name: fail_leased_of_profile
UPDATE tasks SET state = 'failed', error = :reason, updated = :now
WHERE profile_id = :profile AND state = 'leased';

-- name: fail_leased_of_token
UPDATE tasks SET state = 'failed', error = :reason, updated = :now
WHERE token_id = :token AND state = 'leased';

-- name: expire_task_if_due
UPDATE tasks SET state = 'expired', error = :expired, updated = :now
WHERE id = :id AND state = 'leased' AND expires <= :now
RETURNING id, user_id, topic_id;

-- name: get_task_by_request
SELECT {{task_columns}}
FROM tasks WHERE profile_id = :profile_id AND request_id = :request_id;

-- name: get_task
SELECT {{task_columns}}
FROM tasks WHERE id = :id;

-- Whether the user's agents ever claimed the question (the page's link to those tasks).
-- name: get_task_of_user_on_topic
SELECT 1 FROM tasks WHERE topic_id = :topic_id AND user_id = :user_id LIMIT 1;

-- The leases that count against a person's cap: one on a question since closed or taken
-- down, or in a community the person has left since, can be neither renewed nor
-- submitted, and must not keep its holder from claiming anything else until it expires.
-- With the soonest expiry among them: when a slot frees at the latest.
-- name: count_live_leases
SELECT COUNT(*), MIN(k.expires) FROM tasks k JOIN topics t ON t.id = k.topic_id
WHERE k.user_id = :user_id AND k.state = 'leased' AND k.expires > :now
  AND t.status = 'open' AND t.hidden_at IS NULL
  AND EXISTS (SELECT 1 FROM memberships m
              WHERE m.community_id = t.community_id AND m.user_id = k.user_id);

-- A lease only for a token still live inside the claim's transaction: authentication read
-- the token before it began, and a revoke, rotation or suspension may have committed since
-- (it holds the same user lock, so it is either over or not yet begun). No row: refused.
-- name: insert_task
INSERT INTO tasks (id, user_id, profile_id, token_id, topic_id, request_id, reply_to, state,
                   created, updated, expires, question_version, private_included, frozen_messages)
SELECT :id, :user, :profile, :token, :topic, :request, :reply_to, 'leased',
       :now, :now, :expires, :version, :private, :frozen
WHERE EXISTS (SELECT 1 FROM tokens WHERE id = :token AND revoked = 0 AND expires > :now)
RETURNING {{task_columns}};

-- name: extend_lease
UPDATE tasks SET expires = :expires, updated = :now WHERE id = :id AND state = 'leased'
RETURNING {{task_columns}};

-- name: fail_task
UPDATE tasks SET state = 'failed', error = :error, updated = :now
WHERE id = :id AND state = 'leased';

-- The agent's own report (fail_task): its text is the agent's, whatever it says.
-- name: fail_task_by_agent
UPDATE tasks SET state = 'failed', error = :error, agent_failed = 1, updated = :now
WHERE id = :id AND state = 'leased';

-- name: complete_task
UPDATE tasks SET state = 'done', message_id = :message, result_hash = :hash, updated = :now
WHERE id = :id AND state = 'leased'
RETURNING {{task_columns}};

-- The ManagedTask projection, joined with its topic and agent; no title of a question an
-- admin took down, but to its asker (reading.TAKEN_DOWN_TITLE stands in).
-- name: get_managed_task
SELECT k.id, k.topic_id,
       CASE WHEN t.hidden_at IS NULL OR t.author_id = k.user_id THEN t.title END AS topic_title,
       t.community_id, k.profile_id,
       p.name AS agent_name, p.client, k.state, k.reply_to, k.created, k.updated,
       k.expires, k.message_id, k.error, k.agent_failed
FROM tasks k JOIN topics t ON t.id = k.topic_id JOIN profiles p ON p.id = k.profile_id
WHERE k.id = :id;

-- The owner's tasks page, newest first; a NULL filter matches every task. With each done
-- task, whether an admin hid its answer (and why): the page then offers no link to it; and
-- whether the question is closed (a lease on it can be neither renewed nor submitted).
-- name: list_managed_tasks
SELECT k.id, k.topic_id,
       CASE WHEN t.hidden_at IS NULL OR t.author_id = k.user_id THEN t.title END AS topic_title,
       t.community_id, k.profile_id, t.status AS topic_status,
       p.name AS agent_name, p.client, k.state, k.reply_to, k.created, k.updated,
       k.expires, k.message_id, k.error, k.agent_failed,
       CASE WHEN m.hidden_at IS NULL THEN 0 ELSE 1 END AS answer_hidden,
       m.hidden_reason AS answer_hidden_reason
FROM tasks k JOIN topics t ON t.id = k.topic_id JOIN profiles p ON p.id = k.profile_id
LEFT JOIN messages m ON m.id = k.message_id
WHERE k.user_id = :user
  AND (:topic IS NULL OR k.topic_id = :topic)
  AND (:profile IS NULL OR k.profile_id = :profile)
  AND (:state IS NULL OR k.state = :state)
ORDER BY k.created DESC, k.id DESC
LIMIT :limit OFFSET :offset;

-- name: count_managed_tasks
SELECT COUNT(*) FROM tasks k
WHERE k.user_id = :user
  AND (:topic IS NULL OR k.topic_id = :topic)
  AND (:profile IS NULL OR k.profile_id = :profile)
  AND (:state IS NULL OR k.state = :state);

-- name: insert_message
INSERT INTO messages (id, topic_id, user_id, profile_id, task_id, reply_to, name, model, text,
                      reasoning_summary, uncertainties, conditions, sources, tool_runs,
                      provenance, question_version, share_public, created)
VALUES (:id, :topic, :user, :profile, :task, :reply_to, :name, :model, :text, :reasoning,
        :uncertainties, :conditions, :sources, :tool_runs, 'external-self-reported',
        :version, 0, :now);

-- name: bump_message_count
UPDATE topics SET message_count = message_count + 1, updated = :now, last_answer_at = :now
WHERE id = :id;

-- name: get_message_in_topic
SELECT 1 FROM messages WHERE id = :id AND topic_id = :topic_id AND hidden_at IS NULL;
