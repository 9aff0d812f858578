import { timingSafeEqual } from 'node:crypto';
import type { Queryable } from '../db/database.ts';
import type { ServerKey } from '../secrets/serverKey.ts';
import { feedToken, UUID } from './ownWatchlist.ts';

/**
 * The watchlist whose private feed URL carries this token: derived from the server key and the feed
 * version (core/watchlists/ownWatchlist.ts), compared in constant time. A rotated version's token, or
 * any other, finds nothing, from the moment the rotation commits.
 */
export async function watchlistByFeedToken(
  sql: Queryable,
  key: ServerKey,
  id: string,
  token: string,
): Promise<{ id: string; name: string; createdAt: Date } | undefined> {
  if (!UUID.test(id)) return undefined;
  const [row] = await sql<{ id: string; name: string; feedVersion: number; createdAt: Date }[]>`
    select id::text as id, name, feed_version as "feedVersion", created_at as "createdAt" from watchlists where id = ${id}`;
  if (!row) return undefined;
  const expected = Buffer.from(feedToken(key, row.id, row.feedVersion));
  const given = Buffer.from(token);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  return { id: row.id, name: row.name, createdAt: row.createdAt };
}
