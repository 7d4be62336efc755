-- Notification e-mail goes only to an address its owner has confirmed with the code mailed
-- to it; otherwise anyone could point their notifications at someone else's mailbox.
-- email_confirmed: the address last confirmed ('' for none), so that going back to it needs
-- no new code. email_code_due: 1 while a code mail waits for the mailer.
-- Addresses saved before this have not been confirmed: their owners confirm them once.
ALTER TABLE users ADD COLUMN email_confirmed TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN email_code_due BIGINT NOT NULL DEFAULT 0;
CREATE INDEX users_email_code_due ON users (id) WHERE email_code_due = 1;
