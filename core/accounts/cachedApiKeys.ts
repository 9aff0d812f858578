import type { Sql } from '../db/database.ts';
import { watchChannel } from '../db/watchChannel.ts';
import { findApiKey, type ApiKeyOwner } from '../keys.ts';
import type { TierCache } from '../tiers/loadTiers.ts';

/** Where sql/038_per_request_work.sql announces changes to keys, users and tiers, naming the table. */
export const AUTH_CHANNEL = 'afterimage_auth';
/** The tables whose changes the tier cache holds. */
const TIER_TABLES = new Set(['tiers', 'tier_features', 'tier_limits', 'limit_definitions']);
/** Keys kept at most (an active key per user, and revoked ones still sent); past it the cache starts again. */
const MAX_KEYS = 10_000;

export interface ApiKeyCache {
  /** findApiKey, answered from this process's memory when it can be trusted. */
  find(keyHash: Uint8Array): Promise<ApiKeyOwner | undefined>;
  close(): Promise<void>;
}

/**
 * API keys as authentication reads them (the key, its owner, the owner's tier), kept by each API
 * process so that a request with a known key costs no query. Every change to them is announced at
 * commit on AUTH_CHANNEL (sql/038), and any announcement drops everything kept: a revoked key is refused
 * by every process from the moment the announcement arrives. While the LISTEN connection is down
 * announcements may be lost, so nothing is kept until it listens again, and what was kept is dropped.
 * Unknown keys are not kept: guesses cannot fill the memory. `keepMs` bounds how long a lookup is
 * trusted all the same (0 keeps nothing: tests that change keys and tiers behind the API's back).
 * The tier cache (`tiers`) is dropped on changes to the tiers' tables and on reconnection too.
 */
export async function cachedApiKeys(
  sql: Sql,
  options: { tiers?: Pick<TierCache, 'invalidate'>; keepMs?: number } = {},
): Promise<ApiKeyCache> {
  const { tiers, keepMs = 60_000 } = options;
  let kept = new Map<string, { at: number; owner: Promise<ApiKeyOwner | undefined> }>();
  const dropAll = () => {
    kept = new Map();
    tiers?.invalidate();
  };
  const watch = await watchChannel(sql, AUTH_CHANNEL, {
    notified(table) {
      kept = new Map();
      if (TIER_TABLES.has(table)) tiers?.invalidate();
    },
    lost: dropAll,
    listening: dropAll,
  });
  return {
    find(keyHash) {
      if (keepMs === 0 || !watch.isListening()) return findApiKey(sql, keyHash);
      const id = Buffer.from(keyHash.buffer, keyHash.byteOffset, keyHash.byteLength).toString('base64');
      const keptNow = kept;
      const entry = keptNow.get(id);
      if (entry && Date.now() - entry.at < keepMs) return entry.owner;
      if (keptNow.size >= MAX_KEYS) keptNow.clear();
      // Kept from the start, so concurrent requests with the same key share one query; a lookup that
      // finds nothing or fails is forgotten. A change announced meanwhile replaced `kept`: this answer
      // goes to its own request only.
      const owner = findApiKey(sql, keyHash);
      const fresh = { at: Date.now(), owner };
      keptNow.set(id, fresh);
      const forget = () => {
        if (keptNow.get(id) === fresh) keptNow.delete(id);
      };
      owner.then((found) => found ?? forget(), forget);
      return owner;
    },
    close: () => watch.stop(),
  };
}
