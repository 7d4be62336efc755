-- SQLite's `IS :value` compares with NULL too; PostgreSQL spells it IS NOT DISTINCT FROM.
-- Same name and parameters as the common query.

-- name: get_first_row_sealed_with
SELECT topic_id, version, private_key_id, private_context FROM question_versions
WHERE private_context IS NOT NULL AND private_key_id IS NOT DISTINCT FROM :key_id LIMIT 1;
