-- Messages of one question version whose authors allowed public use, oldest first.
-- name: list_shared_messages_of_version
SELECT id, name, text, reasoning_summary, uncertainties, conditions, sources, created
FROM messages
WHERE topic_id = :topic_id AND question_version = :version AND share_public = 1 AND hidden_at IS NULL
ORDER BY created, id;

-- Hidden answers count as no longer shared.
-- name: list_shared_message_ids_of_topic
SELECT id FROM messages WHERE topic_id = :topic_id AND share_public = 1 AND hidden_at IS NULL;

-- The newest card of a topic in one state (draft, published or hidden).
-- name: get_card_in_state
SELECT id, topic_id, version, body, message_ids, state, created, published
FROM answer_cards
WHERE topic_id = :topic_id AND state = :state
ORDER BY created DESC, id DESC
LIMIT 1;

-- name: list_published_cards_of_topic
SELECT id, message_ids FROM answer_cards WHERE topic_id = :topic_id AND state = 'published';

-- name: delete_card_drafts
DELETE FROM answer_cards WHERE topic_id = :topic_id AND state = 'draft';

-- name: insert_card_draft
INSERT INTO answer_cards (id, topic_id, version, body, message_ids, state, created, published)
VALUES (:id, :topic, :version, :body, :message_ids, 'draft', :now, NULL);

-- name: hide_published_cards
UPDATE answer_cards SET state = 'hidden', hidden_reason = 'replaced'
WHERE topic_id = :topic_id AND state = 'published';

-- :reason is 'withdrawn', 'unpublished' or 'moderated' (see migration 0007).
-- name: hide_card
UPDATE answer_cards SET state = 'hidden', hidden_reason = :reason
WHERE id = :id AND state = 'published';

-- The newest card hidden because an author withdrew an answer it used (withdrawn) or an
-- admin hid one (moderated), when no card is published or hidden since (the question page
-- then says a new card is needed, and after a withdrawal may offer to republish).
-- name: get_last_hidden_card
SELECT id, topic_id, version, body, message_ids, state, created, published, hidden_reason
FROM answer_cards a
WHERE a.topic_id = :topic_id AND a.state = 'hidden'
  AND a.hidden_reason IN ('withdrawn', 'moderated')
  AND NOT EXISTS (SELECT 1 FROM answer_cards p WHERE p.topic_id = a.topic_id
                  AND (p.state = 'published' OR (p.state = 'hidden' AND p.published > a.published)))
ORDER BY a.published DESC, a.id DESC
LIMIT 1;

-- name: republish_card
UPDATE answer_cards SET state = 'published', hidden_reason = NULL, published = :now
WHERE id = :id AND state = 'hidden';

-- The distinct users whose agents wrote the messages (a JSON array of ids).
-- name: list_authors_of_messages
SELECT DISTINCT user_id FROM messages WHERE id IN (SELECT value FROM json_each(:message_ids));

-- name: publish_card
UPDATE answer_cards SET state = 'published', published = :now WHERE id = :id AND state = 'draft';

-- name: get_card
SELECT id, topic_id, version, body, message_ids, state, created, published
FROM answer_cards WHERE id = :id;
