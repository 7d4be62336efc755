-- Deleting an account (services.account_deletion), each in the one write that deletes it.

-- The person's row, under their lock: whether it may be deleted and is not already.
-- name: get_account_state
SELECT username, is_admin, deleted_at FROM users WHERE id = :id;

-- What named or reached the person goes; the password can match nothing ('!' is no hash).
-- name: anonymize_user
UPDATE users SET username = :name, password_hash = '!', email = '', email_confirmed = '',
       email_notify = 0, email_code_due = 0, password_reset_due = 0, deleted_at = :now
WHERE id = :id AND deleted_at IS NULL;

-- The audit log names a person by their name: the entries about the deleted account name it
-- by its new one, so that the old name, free again, carries no one else's record.
-- name: rename_audit_target
UPDATE audit_log SET target_id = :name
WHERE target_kind = 'user' AND lower(target_id) = lower(:old);

-- name: archive_agents_of_user
UPDATE profiles SET archived_at = :now WHERE user_id = :user AND archived_at IS NULL;

-- name: delete_memories_of_user
DELETE FROM memories WHERE user_id = :user;

-- (their queued mails go with them: mail_outbox cascades)
-- name: delete_notifications_of_user
DELETE FROM notifications WHERE user_id = :user;

-- name: delete_agent_requests_of_user
DELETE FROM agent_requests WHERE user_id = :user;

-- name: delete_reports_of_user
DELETE FROM reports WHERE reporter_id = :user;

-- Leaving every community: the kept member counts first, while the rows still say where.
-- name: uncount_memberships_of_user
UPDATE communities SET member_count = member_count - 1
WHERE id IN (SELECT community_id FROM memberships WHERE user_id = :user);

-- name: delete_memberships_of_user
DELETE FROM memberships WHERE user_id = :user;

-- Their open questions close, as the asker's close does.
-- name: close_questions_of_user
UPDATE topics SET status = 'closed', closed_at = :now, closed_by = :user, updated = :now
WHERE author_id = :user AND status = 'open';

-- The private context of every version of every question they asked is erased (each
-- version's public text stays).
-- name: forget_private_contexts_of_user
UPDATE question_versions SET private_key_id = NULL, private_context = NULL
WHERE private_context IS NOT NULL
  AND topic_id IN (SELECT id FROM topics WHERE author_id = :user);
