-- Never for a deleted account (its notifications were erased, and nobody reads them now):
-- no row then.
-- name: insert_notification
INSERT INTO notifications (user_id, kind, topic_id, message_id, task_id, created, mailed, cause)
SELECT :user, :kind, :topic, :message, :task, :now, :mailed, :cause
FROM users WHERE id = :user AND deleted_at IS NULL
RETURNING id;

-- The recipient's address when they asked for e-mail and confirmed it (no row: no mail).
-- name: get_mail_address_if_wanted
SELECT email FROM users
WHERE id = :user_id AND email_notify = 1 AND email <> '' AND email = email_confirmed;

-- Whether a notification's mail is held back: one of its kind on this question was mailed
-- after :since and is still unread (that mail already called the person to the question),
-- or :cap were mailed to the person after :since. Both read the partial index of mails.
-- name: mail_held_back
SELECT CASE WHEN EXISTS (SELECT 1 FROM notifications
                         WHERE user_id = :user AND mailed = 1 AND created > :since
                           AND read_at IS NULL AND kind = :kind AND topic_id = :topic)
              OR (SELECT COUNT(*) FROM (SELECT 1 FROM notifications
                                        WHERE user_id = :user AND mailed = 1 AND created > :since
                                        LIMIT :cap) AS recent) >= :cap
            THEN 1 ELSE 0 END;

-- name: enqueue_mail
INSERT INTO mail_outbox (notification_id, next_attempt, created) VALUES (:notification_id, :now, :now);

-- name: count_unread_notifications
SELECT COUNT(*) FROM notifications WHERE user_id = :user_id AND read_at IS NULL;

-- The header's count, on every page: counting stops at :cap, so a person with thousands
-- unread costs no more than one with a hundred.
-- name: count_unread_notifications_capped
SELECT COUNT(*) FROM (SELECT 1 FROM notifications WHERE user_id = :user AND read_at IS NULL
                      LIMIT :cap) AS capped;

-- A notification with what it shows, all of it readable by its recipient: the question's
-- public title, the answering agent's name, the agent of the task.
-- name: get_notification
SELECT n.id, n.user_id, n.kind, n.cause, n.topic_id, n.message_id, n.task_id, n.created,
       n.read_at, CASE WHEN t.hidden_at IS NULL OR t.author_id = n.user_id THEN t.title END
       AS topic_title, u.username AS asker_name,
       m.name AS answer_agent, mu.username AS answer_owner, p.name AS task_agent
FROM notifications n
JOIN topics t ON t.id = n.topic_id
JOIN users u ON u.id = t.author_id
LEFT JOIN messages m ON m.id = n.message_id
LEFT JOIN users mu ON mu.id = m.user_id
LEFT JOIN tasks k ON k.id = n.task_id
LEFT JOIN profiles p ON p.id = k.profile_id
WHERE n.id = :id;

-- The inbox, newest first, a page at a time (keyset on the id).
-- name: list_notifications_before
SELECT n.id, n.user_id, n.kind, n.cause, n.topic_id, n.message_id, n.task_id, n.created,
       n.read_at, CASE WHEN t.hidden_at IS NULL OR t.author_id = n.user_id THEN t.title END
       AS topic_title, u.username AS asker_name,
       m.name AS answer_agent, mu.username AS answer_owner, p.name AS task_agent
FROM notifications n
JOIN topics t ON t.id = n.topic_id
JOIN users u ON u.id = t.author_id
LEFT JOIN messages m ON m.id = n.message_id
LEFT JOIN users mu ON mu.id = m.user_id
LEFT JOIN tasks k ON k.id = n.task_id
LEFT JOIN profiles p ON p.id = k.profile_id
WHERE n.user_id = :user AND n.id < :before
ORDER BY n.id DESC
LIMIT :limit;

-- name: mark_notification_read
UPDATE notifications SET read_at = :now WHERE id = :id AND user_id = :user AND read_at IS NULL;

-- name: mark_all_notifications_read
UPDATE notifications SET read_at = :now
WHERE user_id = :user AND read_at IS NULL AND id <= :up_to;

-- name: get_notification_owner
SELECT user_id FROM notifications WHERE id = :id;

-- An unread request to share this message (asking twice adds nothing).
-- name: get_pending_share_request
SELECT id FROM notifications
WHERE message_id = :message_id AND kind = 'share_request' AND read_at IS NULL LIMIT 1;

-- Answers whose authors have an unread request to share them (asking again waits for that).
-- name: list_share_requests_of_topic
SELECT DISTINCT message_id FROM notifications
WHERE topic_id = :topic_id AND kind = 'share_request' AND message_id IS NOT NULL AND read_at IS NULL;

-- confirmed: the address saved is the one last confirmed (see get_mail_address_if_wanted).
-- name: get_notify_settings
SELECT email, email_notify, email_confirmed,
       CASE WHEN email <> '' AND email = email_confirmed THEN 1 ELSE 0 END AS confirmed
FROM users WHERE id = :user_id;

-- :code_due is 1 when a confirmation code is to be mailed to the new address.
-- A code still due stays due only for the same address: the mailer sends it to whatever
-- address is saved when it goes, and one asked for an address of one's own must not go to
-- the next one saved, whose own codes ran out (the comparison reads the old address).
-- name: set_notify_settings
UPDATE users SET email = :email, email_notify = :notify,
                 email_code_due = CASE WHEN :code_due = 1 THEN 1
                                       WHEN email = :email THEN email_code_due ELSE 0 END
WHERE id = :user;

-- Only while the address is still the one whose budget the request spent (:email).
-- name: queue_email_code
UPDATE users SET email_code_due = 1 WHERE id = :user AND email <> '' AND email = :email;

-- Confirms the address only if it is still the one the code was made for.
-- name: confirm_email
UPDATE users SET email_confirmed = email WHERE id = :user AND email = :email AND email <> '';

-- Codes to mail: claiming one (claim_email_code) takes it from every other mailer.
-- name: list_due_email_codes
SELECT id, email FROM users WHERE email_code_due = 1 ORDER BY id LIMIT :limit;

-- name: claim_email_code
UPDATE users SET email_code_due = 0 WHERE id = :id AND email_code_due = 1;

-- Mail the mailer may try now, oldest first, with the recipient's current address.
-- name: list_due_mail
SELECT o.id, o.notification_id, o.attempts, u.email,
       CASE WHEN u.email_notify = 1 AND u.email <> '' AND u.email = u.email_confirmed
            THEN 1 ELSE 0 END AS wanted
FROM mail_outbox o
JOIN notifications n ON n.id = o.notification_id
JOIN users u ON u.id = n.user_id
WHERE o.next_attempt <= :now
ORDER BY o.next_attempt, o.id
LIMIT :limit;

-- Take a due row for this mailer: moving its next attempt past the send window hides it
-- from every other mailer's list_due_mail. Under READ COMMITTED a second mailer's UPDATE
-- waits for the first to commit, re-checks the WHERE and changes nothing.
-- name: claim_mail
UPDATE mail_outbox SET next_attempt = :until WHERE id = :id AND next_attempt <= :now;

-- name: delete_mail
DELETE FROM mail_outbox WHERE id = :id;

-- name: postpone_mail
UPDATE mail_outbox SET attempts = attempts + 1, next_attempt = :next WHERE id = :id;
