-- A question asked with a requestId (the web page sends one per form): the same request
-- sent again, after a response lost on the way, gets the question it made instead of a
-- second copy. request_hash is the SHA-256 of the request's public fields, to tell a
-- replay from another question under the same id.
ALTER TABLE topics ADD COLUMN request_id TEXT;
ALTER TABLE topics ADD COLUMN request_hash TEXT;
CREATE UNIQUE INDEX topics_request ON topics (author_id, request_id) WHERE request_id IS NOT NULL;
