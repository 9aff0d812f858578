/**
 * How a crawl starts or is joined: a channel search (the query parsed, charged, the channel
 * resolved), a "continue" of a session onto the archive's next page, and the recrawl of channels
 * that are due. A new crawl's first step (crawlStep.ts) is queued in the transaction that records it.
 */
import type { Queryable, Sql } from '../db/database.ts';
import { AppError, notFound } from '../errors.ts';
import { appendEvents, crawlStream } from '../events/events.ts';
import { searchEvents } from '../events/searchEvents.ts';
import type { Logger } from '../log.ts';
import { DefiniteError } from '../sources/httpErrors.ts';
import type { ChannelRecord, VideoSource } from '../sources/types.ts';
import { upsertChannel } from '../videos/upsertVideos.ts';
import { ACCEPTED_FORMS, type ChannelQuery, parseChannelQuery } from '../youtube/channelQuery.ts';
import { queueCrawlStep } from './crawlStep.ts';
import { watchSource } from './watchSource.ts';

/**
 * A channel search (POST /api/search, search_channel): parses the query, charges the caller
 * (`charge` throws when the quota is used up), resolves the channel and starts or joins its crawl.
 */
export async function searchChannel(
  deps: { sql: Sql; sources: VideoSource[]; log: Logger; sourceWaitBudgetMs: number },
  input: { query: string; userId: string | null },
  charge: () => Promise<void>,
): Promise<StartedSearch & { channelId: string }> {
  const parsed = parseChannelQuery(input.query);
  if (!parsed) throw new AppError('INVALID_INPUT', `query: not a channel or video reference; accepted forms: ${ACCEPTED_FORMS.join('; ')}`);
  await charge();
  const channel = await resolveChannel(deps.sql, deps.sources, parsed, deps.log, deps.sourceWaitBudgetMs);
  if (!channel) throw notFound(`no source knows the channel of "${input.query}"`);
  const started = await startSearch(deps.sql, { userId: input.userId, channel, query: input.query, kind: 'full' }, deps.log);
  return { ...started, channelId: channel.channelId };
}

async function fromDatabase(sql: Sql, query: ChannelQuery): Promise<ChannelRecord | undefined> {
  const rows = await (query.kind === 'channelId'
    ? sql`select channel_id, title from channels where channel_id = ${query.channelId}`
    : query.kind === 'handle'
      ? sql`select channel_id, title from channels where lower(handle) = lower(${query.handle})`
      : query.kind === 'video'
        ? sql`select c.channel_id, c.title from videos v join channels c on c.channel_id = v.channel_id where v.video_id = ${query.videoId}`
        : sql`
          select channel_id, title from (
            select channel_id, title, 0 as rank from channels where lower(custom_url) in (lower(${query.name}), lower(${`@${query.name}`}))
            union all
            -- youtube.com/<name> is a custom URL or a legacy user name: the kind the query names first.
            select c.channel_id, c.title, case when n.kind = ${query.kind === 'user' ? 'user' : 'custom'} then 1 else 2 end
            from channel_url_names n join channels c on c.channel_id = n.channel_id
            where lower(n.name) = lower(${query.name})
          ) named order by rank limit 1`);
  const [row] = rows as unknown as Array<{ channel_id: string; title: string }>;
  return row ? { channelId: row.channel_id, title: row.title || undefined } : undefined;
}

/**
 * The channel a query names: from the database when known (with the title the sources will refresh
 * during the crawl), else from the first source that knows it. When no source could answer at all
 * (each one failed) and at least one failure was transient, asking again later may work: that is a
 * 503, not a 404. Sources that all failed definitely (or answered "unknown") make it a 404.
 */
export async function resolveChannel(
  sql: Sql,
  sources: VideoSource[],
  query: ChannelQuery,
  log: Logger,
  /** SOURCE_WAIT_BUDGET_MS: how long one source may answer nothing before it is given up on. */
  waitBudgetMs: number,
): Promise<ChannelRecord | undefined> {
  const known = await fromDatabase(sql, query);
  if (known) return known;
  const failures: Array<{ source: string; message: string; transient: boolean }> = [];
  for (const source of sources) {
    try {
      // A source that answers nothing holds the caller's request for the wait budget at most.
      const { result: channel, gaveUp } = await watchSource(
        source.name,
        waitBudgetMs,
        () => {},
        (signal) => source.resolveChannel(query, signal),
      );
      if (channel) return channel;
      // Stopped before it could tell: not an "unknown channel".
      if (gaveUp) throw gaveUp;
    } catch (error) {
      log.warn('source could not resolve channel', { source: source.name, err: error });
      failures.push({ source: source.name, message: (error as Error).message, transient: !(error instanceof DefiniteError) });
    }
  }
  if (failures.length > 0 && failures.length === sources.length && failures.some((failure) => failure.transient)) {
    const reasons = failures.map((failure) => `${failure.source}: ${failure.message}`).join('; ');
    throw new AppError('SERVICE_UNAVAILABLE', `no source could be asked about this channel right now (${reasons}); retry shortly`, {
      headers: { 'Retry-After': '30' },
    });
  }
  return undefined;
}

export interface StartedSearch {
  sessionId: string;
  crawlId: string;
  joined: boolean;
  channelTitle: string;
}

/**
 * Opens a search session on a channel in one transaction: records the channel, joins the crawl
 * already running for it or starts one (its first step queued in the same transaction), and
 * notes the position from which the crawl's events are the session's live part. Answers the
 * channel's title as stored.
 */
export async function startSearch(
  sql: Sql,
  input: { userId: string | null; channel: ChannelRecord; query: string; kind: 'full' | 'archive_page'; archiveCursor?: string | null },
  log?: Logger,
): Promise<StartedSearch> {
  return sql.begin(async (tx) => {
    await upsertChannel(tx, input.channel, log);
    const channelId = input.channel.channelId;
    const [running] = await tx<{ id: string }[]>`
      select id::text from crawls where channel_id = ${channelId} and kind = ${input.kind} and status = 'running' for update`;
    let crawlId = running?.id;
    if (!crawlId) {
      const [crawl] = await tx<{ id: string }[]>`
        insert into crawls (channel_id, kind, archive_cursor) values (${channelId}, ${input.kind}, ${input.archiveCursor ?? null}) returning id::text`;
      crawlId = crawl!.id;
      await queueCrawlStep(tx, crawlId, 0);
    }
    return { ...(await openSession(tx, { userId: input.userId, channelId, query: input.query }, crawlId)), joined: Boolean(running) };
  });
}

/**
 * A search session following crawl `crawlId`, in the caller's transaction: its live part is the
 * crawl's events after the last one committed now. What a crawl step still writing adds comes live,
 * and its videos may also be in the snapshot if it commits before the stream reads it.
 */
async function openSession(tx: Queryable, input: { userId: string | null; channelId: string; query: string }, crawlId: string) {
  const [session] = await tx<{ id: string; channelTitle: string }[]>`
    insert into search_sessions (user_id, channel_id, crawl_id, join_seq, query)
    values (${input.userId}, ${input.channelId}, ${crawlId}, coalesce((select last_seq from event_streams where stream = ${crawlStream(crawlId)}), 0), ${input.query})
    returning id, (select title from channels where channel_id = ${input.channelId}) as "channelTitle"`;
  return { sessionId: session!.id, crawlId, channelTitle: session!.channelTitle };
}

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

/** What "continue" loads: the archive-page crawl of the next page, or the full crawl that has not reached the archives yet (joined). */
type ArchivePage = { kind: 'archive_page'; archiveCursor: string | null } | { kind: 'full' };

/**
 * Where "continue" pages the channel's archive look-ups next: the archive-page crawl already
 * running (joined), else the cursor the latest crawl left ('' when its look-ups failed before their
 * first page: they start again), else the full crawl still running towards the archives (joined).
 * Undefined when there is no further page.
 */
async function nextArchivePage(sql: Queryable, channelId: string): Promise<ArchivePage | undefined> {
  const [latest] = await sql<{ status: string; next: string | null; kind: 'full' | 'archive_page' }[]>`
    select status, next_archive_cursor as next, kind from crawls where channel_id = ${channelId}
    order by (kind = 'archive_page' and status = 'running') desc, coalesce(finished_at, started_at) desc limit 1`;
  if (!latest) return undefined;
  if (latest.kind === 'archive_page' && latest.status === 'running') return { kind: 'archive_page', archiveCursor: null };
  if (latest.next !== null) return { kind: 'archive_page', archiveCursor: latest.next };
  if (latest.kind === 'full' && latest.status === 'running') return { kind: 'full' };
  return undefined;
}

export interface RecrawlIntervals {
  /** Channels nobody watches: RECRAWL_HOURS. */
  everyHours: number;
  /** Channels a watchlist item watches: WATCH_RECRAWL_HOURS. */
  watchedEveryHours: number;
}

/**
 * Re-crawls every channel whose last full crawl ended longer ago than its interval, so new uploads
 * arrive without a search: a watched channel's (watchedEveryHours) or another's (everyHours). A
 * channel is due once however many watchlists watch it, and a channel being crawled is joined, not
 * crawled twice. A channel never crawled (known only from a video) is left to searches unless it is
 * watched: one watched before its first crawl is crawled now. Answers how many channels were due.
 */
export async function recrawlDueChannels(sql: Sql, intervals: RecrawlIntervals): Promise<number> {
  const due = await sql<{ channelId: string }[]>`
    with watched as (select distinct channel_id from watchlist_items where channel_id is not null),
    candidates as (
      select w.channel_id, true as watched from watched w
      union all
      select c.channel_id, false from channels c
      where not exists (select 1 from watched w where w.channel_id = c.channel_id)
        and exists (select 1 from crawls cr where cr.channel_id = c.channel_id and cr.kind = 'full')
    )
    select k.channel_id as "channelId" from candidates k left join channels c on c.channel_id = k.channel_id
    where coalesce(c.channel_status, 'live') = 'live'
      and not exists (select 1 from crawls cr where cr.channel_id = k.channel_id and cr.kind = 'full'
        and (cr.status = 'running'
          or cr.finished_at > now() - make_interval(hours => case when k.watched then ${intervals.watchedEveryHours}::int else ${intervals.everyHours}::int end)))`;
  for (const { channelId } of due) await startSearch(sql, { userId: null, channel: { channelId }, query: channelId, kind: 'full' });
  return due.length;
}
