-- Email addresses in one form, and their look-alikes found by one lookup. The data step
-- (core/db/normalizeStoredEmails.ts) rewrites the stored addresses in that form (core/email/normalizeEmail.ts)
-- and fills the skeletons (core/email/lookAlikes.ts): both need Unicode tables SQL does not have.
-- Addresses are compared as stored from now on: the application normalises what it is given.
drop index users_email_unique;
create unique index users_email_unique on users (email);

-- TR39's confusable skeleton of the address: a new account whose skeleton an existing one has is refused.
-- Not unique: accounts that looked alike before this migration are reported, not changed.
alter table users add column email_skeleton text;
create index users_email_skeleton on users (email_skeleton);

-- Sign-in limits: failures per address (sign-ups have their own now), per address and email (new), and
-- per email, which slows attempts down instead of refusing them.
update limit_definitions set description = 'Failed sign-in attempts per client address per 15 minutes' where name = 'signInsPerAddress';
update limit_definitions set description = 'Failed sign-in attempts per email address per hour; past a few, each attempt waits longer (never refused)'
  where name = 'signInsPerAccount';
insert into limit_definitions (name, description, unit, window_kind, window_seconds, counted_per) values
  ('signInsPerAddressAndEmail', 'Failed sign-in attempts per client address and email address per 15 minutes', 'sign-in attempts', 'sliding', 900, 'user'),
  ('signUpsPerAddress', 'Sign-ups per client address per hour', 'sign-ups', 'sliding', 3600, 'user');
