import type { Queryable } from '../db/database.ts';

/** The newest uploads the examples are taken from: one short index scan, whatever the archive's size. */
const SAMPLE = 500;
/** Shorter words are mostly articles and prepositions, in any of the archive's languages. */
const MIN_WORD = 6;

export interface SearchExamples {
  /** A channel with videos among the newest uploads (the one with most of them). */
  channel?: { channelId: string; handle: string };
  /** The most frequent word of the newest uploads' titles. */
  word?: string;
  /** The most frequent word of the deleted (or re-uploaded) ones' titles: a query that finds deleted videos. */
  deletedWord?: string;
}

/** The word of these titles the most titles have (ties: alphabetical), lower case. */
function commonestWord(titles: readonly string[]): string | undefined {
  const counts = new Map<string, number>();
  for (const title of titles) {
    for (const word of new Set(title.toLowerCase().match(/\p{L}+/gu) ?? [])) {
      if (word.length >= MIN_WORD) counts.set(word, (counts.get(word) ?? 0) + 1);
    }
  }
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0];
}

/** Examples for the search box from what the archive holds; none from an empty archive. */
async function searchExamples(sql: Queryable): Promise<SearchExamples> {
  const rows = await sql<{ title: string; status: string; channelId: string; handle: string | null }[]>`
    select v.title, v.status, v.channel_id as "channelId", c.handle
    from (select title, status, channel_id from videos order by upload_date desc nulls last, view_count desc nulls last, video_id limit ${SAMPLE}) v
    join channels c on c.channel_id = v.channel_id`;
  const perChannel = new Map<string, { channelId: string; handle: string; videos: number }>();
  for (const row of rows) {
    if (!row.handle) continue;
    const entry = perChannel.get(row.channelId) ?? { channelId: row.channelId, handle: row.handle, videos: 0 };
    entry.videos++;
    perChannel.set(row.channelId, entry);
  }
  const channel = [...perChannel.values()].sort((a, b) => b.videos - a.videos || a.handle.localeCompare(b.handle))[0];
  return {
    channel: channel && { channelId: channel.channelId, handle: channel.handle },
    word: commonestWord(rows.map((row) => row.title)),
    deletedWord: commonestWord(rows.filter((row) => row.status === 'deleted' || row.status === 're-uploaded').map((row) => row.title)),
  };
}

/** How long examples are reused: the home page is the most visited, its examples need not be the latest. */
const KEEP_MS = 60_000;
const kept = new WeakMap<object, { at: number; examples: Promise<SearchExamples> }>();

/** searchExamples, computed at most once a minute per database. */
export function recentSearchExamples(sql: Queryable): Promise<SearchExamples> {
  const entry = kept.get(sql);
  if (entry && Date.now() - entry.at < KEEP_MS) return entry.examples;
  const examples = searchExamples(sql);
  kept.set(sql, { at: Date.now(), examples });
  examples.catch(() => kept.delete(sql));
  return examples;
}
