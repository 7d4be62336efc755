-- name: list_sealed_key_ids
SELECT DISTINCT private_key_id FROM question_versions
WHERE private_context IS NOT NULL ORDER BY 1;

-- name: get_first_row_sealed_with
SELECT topic_id, version, private_key_id, private_context FROM question_versions
WHERE private_context IS NOT NULL
  AND (private_key_id = :key_id OR (private_key_id IS NULL AND CAST(:key_id AS TEXT) IS NULL))
LIMIT 1;

-- name: list_sealed_rows
SELECT topic_id, version, private_key_id, private_context FROM question_versions
WHERE private_context IS NOT NULL ORDER BY topic_id, version;

-- name: reseal_private_context
UPDATE question_versions SET private_key_id = :key_id, private_context = :sealed
WHERE topic_id = :topic AND version = :version;
