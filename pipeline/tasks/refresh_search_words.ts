import type { Sql } from '../../core/db/database.ts';
import { refreshSearchWords } from '../../core/fts/postgres.ts';
import { defineTask } from '../defineTask.ts';

/**
 * The words of videos changed since the last run join the did-you-mean vocabulary: every 10 minutes
 * (crontab), and as soon as a crawl that stored videos finishes (finishCrawl of core/crawl/crawlStep.ts).
 */
export function refreshSearchWordsTask(sql: Sql) {
  return defineTask('refresh_search_words', async (_payload, helpers) => {
    const { words, videos } = await refreshSearchWords(sql);
    if (videos > 0) helpers.logger.info('search words refreshed', { words, videos });
  });
}
