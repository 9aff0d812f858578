import type { Sql } from '../../core/db/database.ts';
import { recrawlDueChannels, type RecrawlIntervals } from '../../core/crawl/startSearch.ts';
import { defineTask } from '../defineTask.ts';

/**
 * Crontab, every 10 minutes: re-crawls every channel whose last full crawl ended longer ago than its
 * interval (RECRAWL_HOURS, or WATCH_RECRAWL_HOURS for a watched one), so new uploads arrive without a
 * search (see recrawlDueChannels). Run often so a watched channel's interval holds within minutes.
 */
export const recrawlChannelsTask = (sql: Sql, intervals: RecrawlIntervals) =>
  defineTask('recrawl_channels', async (_payload, helpers) => {
    const channels = await recrawlDueChannels(sql, intervals);
    if (channels) helpers.logger.info('channels re-crawled', { channels });
  });
