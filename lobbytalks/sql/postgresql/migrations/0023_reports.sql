-- Reports: a signed-in person who can read an answer (or sees a question) tells the admins
-- what is wrong with it, in a reason written for them. A report waits on /admin until an
-- admin settles it: by hand, or by hiding the answer or taking the question down (which
-- settles every waiting report on it in the same write), or by suspending its sender.
-- message_id NULL: the question. Ids are opaque (rep_…), as the other public ids are.
CREATE TABLE reports (
    id          TEXT PRIMARY KEY,              -- rep_…, as opaque as the other public ids
    created     BIGINT NOT NULL,
    reporter_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    topic_id    TEXT NOT NULL REFERENCES topics (id) ON DELETE CASCADE,
    message_id  TEXT REFERENCES messages (id) ON DELETE CASCADE,
    reason      TEXT NOT NULL,
    settled_at  BIGINT,
    settled_by  BIGINT REFERENCES users (id)
);
-- One waiting report per person and thing: sending it again changes nothing.
CREATE UNIQUE INDEX reports_waiting_once
    ON reports (reporter_id, topic_id, COALESCE(message_id, '')) WHERE settled_at IS NULL;
-- The admin page's queue, oldest first, and what hiding or taking down settles.
CREATE INDEX reports_waiting ON reports (created, id) WHERE settled_at IS NULL;
CREATE INDEX reports_topic ON reports (topic_id) WHERE settled_at IS NULL;
-- What suspending a person settles: their own waiting reports.
CREATE INDEX reports_reporter ON reports (reporter_id) WHERE settled_at IS NULL;
