-- A report, unless the same person's report on the same thing is still waiting (its
-- partial unique index, named as the conflict): no row comes back then.
-- name: insert_report
INSERT INTO reports (id, created, reporter_id, topic_id, message_id, reason)
VALUES (:id, :now, :reporter, :topic, :message, :reason)
ON CONFLICT (reporter_id, topic_id, COALESCE(message_id, '')) WHERE settled_at IS NULL
DO NOTHING RETURNING id;

-- The admins a new report is news to: every one but its sender (users_admins).
-- name: list_admins_but
SELECT id FROM users WHERE is_admin = 1 AND id <> :user AND deleted_at IS NULL ORDER BY id;

-- name: get_report_state
SELECT id, settled_at FROM reports WHERE id = :id;

-- Settling a report, here and below, returns whom to tell (report_settled).
-- name: settle_report
UPDATE reports SET settled_at = :now, settled_by = :admin WHERE id = :id AND settled_at IS NULL
RETURNING reporter_id, topic_id, message_id;

-- Hiding an answer settles the reports on it.
-- name: settle_reports_on_message
UPDATE reports SET settled_at = :now, settled_by = :admin
WHERE topic_id = :topic AND message_id = :message AND settled_at IS NULL
RETURNING reporter_id, topic_id, message_id;

-- Taking a question down settles the reports on it and on its answers (no one but its
-- asker and the admins reads them any more).
-- name: settle_reports_on_topic
UPDATE reports SET settled_at = :now, settled_by = :admin
WHERE topic_id = :topic AND settled_at IS NULL
RETURNING reporter_id, topic_id, message_id;

-- Suspending a person settles their waiting reports (a flood of them goes with its sender).
-- name: settle_reports_of_reporter
UPDATE reports SET settled_at = :now, settled_by = :admin
WHERE reporter_id = :reporter AND settled_at IS NULL;

-- name: count_waiting_reports
SELECT COUNT(*) FROM reports WHERE settled_at IS NULL;

-- The admin page's queue, oldest first (a flood of new ones pushes no earlier one out):
-- what each report names, in public facts only (the question's title and whether it was
-- taken down, the answer's agent, owner and whether it is hidden), and who sent it why.
-- name: list_waiting_reports
SELECT r.id, r.created, r.reason, r.topic_id, r.message_id, p.username AS reporter,
       t.title AS topic_title, t.hidden_at AS topic_hidden_at,
       m.name AS agent_name, a.username AS agent_owner, m.hidden_at AS message_hidden_at
FROM reports r
JOIN users p ON p.id = r.reporter_id
JOIN topics t ON t.id = r.topic_id
LEFT JOIN messages m ON m.id = r.message_id
LEFT JOIN users a ON a.id = m.user_id
WHERE r.settled_at IS NULL
ORDER BY r.created, r.id
LIMIT :limit;

-- A person's own reports, for their data download (what they reported, why, and whether
-- an admin has settled it; never who).
-- name: list_reports_for_export
SELECT id, topic_id, message_id, reason, created, settled_at FROM reports
WHERE reporter_id = :user ORDER BY created, id;
