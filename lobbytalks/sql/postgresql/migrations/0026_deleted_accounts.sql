-- A person may delete their account (services.account_deletion): the row stays, since the
-- questions they asked and the answers of their agents keep pointing at it, but renamed and
-- emptied, with the moment it was deleted (NULL for an account in use).
ALTER TABLE users ADD COLUMN deleted_at BIGINT;
