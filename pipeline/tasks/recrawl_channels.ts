import type { Sql } from '../../core/db/database.ts';
import { recrawlDueChannels } from '../../core/crawl/recrawlDueChannels.ts';
import { defineTask } from '../defineTask.ts';

/**
 * Crontab, hourly: re-crawls every channel whose last full crawl ended more than `everyHours` ago
 * (RECRAWL_HOURS), so new uploads arrive without a search (see recrawlDueChannels).
 */
export const recrawlChannelsTask = (sql: Sql, everyHours: number) =>
  defineTask('recrawl_channels', async (_payload, helpers) => {
    const channels = await recrawlDueChannels(sql, everyHours);
    if (channels) helpers.logger.info('channels re-crawled', { channels });
  });
