-- name: shared_messages_of_version
-- Messages of one question version whose authors allowed public use, oldest first.
SELECT id, name, text, reasoning_summary, uncertainties, conditions, sources, created
FROM messages
WHERE topic_id = ? AND question_version = ? AND share_public = 1 AND hidden_at IS NULL
ORDER BY created, id;

-- name: shared_message_ids_of_topic
-- Hidden answers count as no longer shared.
SELECT id FROM messages WHERE topic_id = ? AND share_public = 1 AND hidden_at IS NULL;

-- name: card_in_state
-- The newest card of a topic in one state (draft, published or hidden).
SELECT id, topic_id, version, body, message_ids, state, created, published
FROM answer_cards
WHERE topic_id = ? AND state = ?
ORDER BY created DESC, id DESC
LIMIT 1;

-- name: published_cards_of_topic
SELECT id, message_ids FROM answer_cards WHERE topic_id = ? AND state = 'published';

-- name: delete_card_drafts
DELETE FROM answer_cards WHERE topic_id = ? AND state = 'draft';

-- name: insert_card_draft
INSERT INTO answer_cards (id, topic_id, version, body, message_ids, state, created, published)
VALUES (:id, :topic, :version, :body, :message_ids, 'draft', :now, NULL);

-- name: hide_published_cards
UPDATE answer_cards SET state = 'hidden' WHERE topic_id = ? AND state = 'published';

-- name: hide_card
UPDATE answer_cards SET state = 'hidden' WHERE id = ? AND state = 'published';

-- name: publish_card
UPDATE answer_cards SET state = 'published', published = ? WHERE id = ? AND state = 'draft';

-- name: card_by_id
SELECT id, topic_id, version, body, message_ids, state, created, published
FROM answer_cards WHERE id = ?;
