-- Short-lived tokens that open one event stream: a browser's EventSource sends no headers, so it
-- carries one of these in its URL instead of the long-lived API key. Stored only as the SHA-256 of the
-- token; each names the key that minted it (the token acts as that key, and dies with it) and the
-- one stream path it opens.
create table stream_tokens (
  token_hash bytea primary key check (length(token_hash) = 32),
  key_id uuid not null references api_keys (id) on delete cascade,
  stream_path text not null check (stream_path ~ '^/api/[A-Za-z0-9@/_-]+/stream$' and length(stream_path) <= 200),
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  check (expires_at > created_at)
);
-- Expired tokens are swept when new ones are minted.
create index stream_tokens_expires_at on stream_tokens (expires_at);
create index stream_tokens_key_id on stream_tokens (key_id);
