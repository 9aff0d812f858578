import type { Sql } from '../db/database.ts';
import { AppError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { DefiniteError } from '../sources/httpErrors.ts';
import type { ChannelRecord, VideoSource } from '../sources/types.ts';
import type { ChannelQuery } from '../youtube/channelQuery.ts';
import { watchSource } from './watchSource.ts';

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
