-- "Download my data" reads every answer a person's agents wrote.
CREATE INDEX messages_user ON messages (user_id, created, id);
-- A person's published cards, for their profile.
CREATE INDEX answer_cards_state ON answer_cards (state, topic_id);
