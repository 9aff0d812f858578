-- Every API process keeps the API keys it has looked up, with their owners and tiers
-- (core/accounts/cachedApiKeys.ts), and the tiers (core/tiers/loadTiers.ts). A change to what they
-- hold tells every process at commit, naming its table, so a revoked key, a changed scope or tier or a
-- withdrawn feature takes effect at once everywhere. last_used_at (written every second a key is used)
-- and password hashes are not authorisation: their updates send nothing.
create function notify_auth_change() returns trigger language plpgsql as $$
begin
  -- One announcement per table and transaction however many rows change (NOTIFY folds repeats).
  perform pg_notify('afterimage_auth', tg_table_name);
  return null;
end $$;

-- Per row, so a statement that changes nothing (revoking the old key of a user who has none) says nothing.
create trigger api_keys_auth_change after update of user_id, key_hash, scope, revoked_at or delete on api_keys
  for each row execute function notify_auth_change();
create trigger users_auth_change after update of email, tier, is_admin or delete on users
  for each row execute function notify_auth_change();
create trigger tiers_auth_change after insert or update or delete on tiers
  for each row execute function notify_auth_change();
create trigger tier_features_auth_change after insert or update or delete on tier_features
  for each row execute function notify_auth_change();
create trigger tier_limits_auth_change after insert or update or delete on tier_limits
  for each row execute function notify_auth_change();
create trigger limit_definitions_auth_change after insert or update or delete on limit_definitions
  for each row execute function notify_auth_change();
-- Truncation has no rows to fire for.
create trigger api_keys_auth_truncate after truncate on api_keys for each statement execute function notify_auth_change();
create trigger users_auth_truncate after truncate on users for each statement execute function notify_auth_change();
create trigger tiers_auth_truncate after truncate on tiers for each statement execute function notify_auth_change();
create trigger tier_features_auth_truncate after truncate on tier_features for each statement execute function notify_auth_change();
create trigger tier_limits_auth_truncate after truncate on tier_limits for each statement execute function notify_auth_change();
create trigger limit_definitions_auth_truncate after truncate on limit_definitions
  for each statement execute function notify_auth_change();

-- Counts the charges of one request in order, each only if it fits and every one before it was
-- counted (core/usage/consumeQuota.ts): a row per counted charge, stopping at the first refused. A
-- function, so that every request sends the same short statement instead of one built per charge. A
-- sliding window is two fixed buckets, the previous one counting in proportion to how much of it is
-- still inside the window; `at` replaces the clock (tests of a window's end).
create function consume_quotas(
  subjects uuid[], limit_names text[], window_kinds text[], window_seconds int[], units int[], maxes int[], at timestamptz
) returns table (used_now int, previous_used int, elapsed float8, bucket_start timestamptz)
language plpgsql as $$
declare
  now_s numeric := extract(epoch from coalesce(at, clock_timestamp()));
  w int;
  started numeric;
  previous_count int;
  carried numeric;
  counted int;
begin
  for i in 1 .. coalesce(cardinality(subjects), 0) loop
    w := window_seconds[i];
    started := floor(now_s / w) * w;
    previous_count := coalesce((select c.used from usage_counters c
      where c.subject = subjects[i] and c.limit_name = limit_names[i] and c.window_start = to_timestamp(started - w)), 0);
    carried := case when window_kinds[i] = 'sliding' then floor(previous_count * (1 - (now_s - started) / w)) else 0 end;
    counted := null;
    insert into usage_counters as c (subject, limit_name, window_start, used)
      select subjects[i], limit_names[i], to_timestamp(started), units[i] where units[i] + carried <= maxes[i]
      on conflict on constraint usage_counters_pkey do update set used = c.used + units[i]
        where c.used + units[i] + carried <= maxes[i]
      returning c.used into counted;
    if counted is null then
      return;
    end if;
    used_now := counted;
    previous_used := previous_count;
    elapsed := (now_s - started) / w;
    bucket_start := to_timestamp(started);
    return next;
  end loop;
end $$;
