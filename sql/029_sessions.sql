-- Accounts for people on the website: a password per user (optional: key-only users exist), sessions,
-- one-time sign-in links, and the counters that rate-limit sign-in attempts.

-- A PHC-style string that names the algorithm and its parameters beside the salt and the hash, so the
-- parameters can be raised later: a stored hash keeps the ones it was made with and is redone at the next sign-in.
alter table users add column password_hash text
  check (password_hash ~ '^\$scrypt\$ln=[0-9]{1,2},r=[0-9]{1,2},p=[0-9]{1,2}\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$');

-- Only the SHA-256 of a session's token is stored: a copy of this table signs nobody in.
create table sessions (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users (id) on delete cascade,
  token_hash bytea not null unique check (length(token_hash) = 32),
  created_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  expires_at timestamptz not null,
  check (expires_at > created_at)
);
create index sessions_user on sessions (user_id);
create index sessions_expires on sessions (expires_at);

-- A link that signs its user in once (the administrator's first sign-in); redeeming deletes it.
create table sign_in_links (
  token_hash bytea primary key check (length(token_hash) = 32),
  user_id uuid not null references users (id) on delete cascade,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  check (expires_at > created_at)
);

-- Sign-in attempts are counted in usage_counters like every other limit (its limit_name needs a
-- definition). They belong to no tier: their maximums are the login's, not a tier's, so no tier_limits rows.
insert into limit_definitions (name, description, unit, window_kind, window_seconds, counted_per) values
  ('signInsPerAddress', 'Failed sign-in attempts and sign-ups per client address per 15 minutes', 'sign-in attempts', 'sliding', 900, 'user'),
  ('signInsPerAccount', 'Failed sign-in attempts per email address per hour', 'sign-in attempts', 'sliding', 3600, 'user');
