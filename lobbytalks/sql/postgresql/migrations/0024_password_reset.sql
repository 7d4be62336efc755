-- Someone who forgot their password asks for a link mailed to the address they confirmed
-- last (while a new one waits for its code, the one confirmed before).
-- password_reset_due: when the latest such request was made, 0 when none waits for the
-- mailer, which signs that moment into the link and sets it back to 0. Nothing about a link
-- is stored: it is a MAC of the person, that moment, their password hash and their
-- confirmed address, so a new password, another address or a rotated key ends it.
ALTER TABLE users ADD COLUMN password_reset_due BIGINT NOT NULL DEFAULT 0;
CREATE INDEX users_password_reset_due ON users (id) WHERE password_reset_due > 0;
-- A request may name the account by its confirmed address instead of its name.
CREATE INDEX users_confirmed_email ON users (lower(email_confirmed)) WHERE email_confirmed <> '';
