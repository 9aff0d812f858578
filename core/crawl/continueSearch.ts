import type { Sql } from '../db/database.ts';
import { appendEvents, crawlStream } from '../events/events.ts';
import { searchEvents } from '../events/searchEvents.ts';
import type { VideoSource } from '../sources/types.ts';
import { nextArchivePage } from './nextArchivePage.ts';
import { openSession, startSearch, type StartedSearch } from './startSearch.ts';

/**
 * "Continue" of a search session (POST /api/search/:id/continue): a new session on the channel's
 * next page of archive look-ups, charged (`charge` throws when the quota is used up). With nothing
 * further to load, a paging client is not answered with an error: its new session's stream ends
 * with search:complete `{morePages: false, reason}`, and nothing is charged.
 */
export async function continueSearch(
  deps: { sql: Sql; sources: VideoSource[] },
  input: { sessionId: string; channelId: string; userId: string | null },
  charge: () => Promise<void>,
): Promise<StartedSearch> {
  const base = { userId: input.userId, channelId: input.channelId, query: `continue ${input.sessionId}` };
  if (!deps.sources.some((source) => source.name === 'wayback')) {
    return nothingToLoad(
      deps.sql,
      base,
      'archive look-ups are not configured on this server (WAYBACK_ENABLED=false), so there is no further page',
    );
  }
  const next = await nextArchivePage(deps.sql, input.channelId);
  if (!next) return nothingToLoad(deps.sql, base, "the channel's archive look-ups have no further page");
  await charge();
  return startSearch(deps.sql, { userId: input.userId, channel: { channelId: input.channelId }, query: base.query, ...next });
}

/** A session on a crawl that ends as it starts, in one transaction: its stream's crawl part is the one search:complete. */
async function nothingToLoad(
  sql: Sql,
  input: { userId: string | null; channelId: string; query: string },
  reason: string,
): Promise<StartedSearch> {
  return sql.begin(async (tx) => {
    const [crawl] = await tx<{ id: string }[]>`
      insert into crawls (channel_id, kind, status, finished_at) values (${input.channelId}, 'archive_page', 'complete', now()) returning id::text`;
    // The session first: its live part is what the crawl appends after it opens.
    const session = await openSession(tx, input, crawl!.id);
    const complete = searchEvents.complete({ channelId: input.channelId, totals: {}, failedSources: [], morePages: false, reason });
    await appendEvents(tx, crawlStream(crawl!.id), [complete]);
    return { ...session, joined: false };
  });
}
