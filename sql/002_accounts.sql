-- Users and their API keys. A key is stored only as its SHA-256 hash; its prefix identifies it in listings.

create table users (
  id uuid primary key default gen_random_uuid(),
  email text not null check (email ~ '^[^@\s]+@[^@\s]+\.[^@\s]+$' and length(email) <= 320),
  tier text not null references tiers (name) on update cascade,
  is_admin boolean not null default false,
  created_at timestamptz not null default now()
);
create unique index users_email_unique on users (lower(email));

create table api_keys (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users (id) on delete cascade,
  key_hash bytea not null unique check (length(key_hash) = 32),
  key_prefix text not null check (key_prefix ~ '^tsk_[A-Za-z0-9]{6}$'),
  scope smallint not null check (scope between 1 and 4),
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz,
  check (revoked_at is null or revoked_at >= created_at)
);
-- One active key per user: a new key can only be added once the old one is revoked.
create unique index api_keys_one_active_per_user on api_keys (user_id) where revoked_at is null;

-- A key's scope may never exceed what its owner's tier allows.
create function check_key_scope() returns trigger language plpgsql as $$
declare
  allowed smallint;
begin
  select t.max_key_scope into allowed from users u join tiers t on t.name = u.tier where u.id = new.user_id;
  if new.scope > allowed then
    raise exception 'key scope L% exceeds L% allowed by the owner''s tier', new.scope, allowed
      using errcode = 'check_violation', constraint = 'api_keys_scope_within_tier';
  end if;
  return new;
end $$;
create trigger api_keys_scope_within_tier before insert or update of scope on api_keys
  for each row execute function check_key_scope();
