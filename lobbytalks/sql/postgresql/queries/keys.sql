-- Re-sealing with a new key: a plain BEGIN (PostgreSQL has no IMMEDIATE; the UPDATEs lock
-- the rows they change). Same name as the common query.

-- name: begin_reseal
BEGIN;
