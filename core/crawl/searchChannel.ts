import type { Sql } from '../db/database.ts';
import { AppError, notFound } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { VideoSource } from '../sources/types.ts';
import { ACCEPTED_FORMS, parseChannelQuery } from '../youtube/channelQuery.ts';
import { resolveChannel } from './resolveChannel.ts';
import { startSearch, type StartedSearch } from './startSearch.ts';

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
