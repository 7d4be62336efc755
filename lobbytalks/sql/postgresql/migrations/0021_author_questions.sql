-- A person's questions of one state, newest first, a page at a time (the profile's lists).
-- Without it SQLite walked every open question of the site by topics_open_created (two
-- equal columns against topics_author_created's one) and kept the author's: 100 ms on the
-- bench's 10,000 questions, for one profile.
CREATE INDEX topics_author_questions ON topics (author_id, kind, status, created DESC, id DESC);
