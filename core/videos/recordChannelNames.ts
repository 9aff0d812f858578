import type { Queryable } from '../db/database.ts';
import { CHANNEL_URL_NAME } from '../youtube/channelQuery.ts';

/** Each name once (names are compared without case), and only names a channel query can carry. */
const rowsOf = (channelId: string, kind: 'custom' | 'user', names: readonly string[]) => [
  ...new Map(
    names.filter((name) => CHANNEL_URL_NAME.test(name)).map((name) => [name.toLowerCase(), { channel_id: channelId, kind, name }]),
  ).values(),
];

/**
 * Records the names an archive knows a channel's URLs by (youtube.com/c/<name>, /user/<name>), so
 * that resolveChannel finds the channel by any of them without the archive at hand. A name recorded
 * for another channel before moves to this one: the newest record of a name is the one that holds.
 */
export async function recordChannelNames(
  sql: Queryable,
  channelId: string,
  names: { customNames: readonly string[]; userNames: readonly string[] },
): Promise<void> {
  const rows = [...rowsOf(channelId, 'custom', names.customNames), ...rowsOf(channelId, 'user', names.userNames)];
  if (rows.length === 0) return;
  await sql`
    insert into channel_url_names ${sql(rows, 'channel_id', 'kind', 'name')}
    on conflict (kind, lower(name)) do update set channel_id = excluded.channel_id, name = excluded.name, recorded_at = now()`;
}
