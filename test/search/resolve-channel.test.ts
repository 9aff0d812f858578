import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addBatch } from '../../core/crawl/totals.ts';
import { resolveChannel } from '../../core/crawl/resolveChannel.ts';
import { loadConfig } from '../../core/config.ts';
import { createLogger } from '../../core/log.ts';
import { DefiniteError, TransientError } from '../../core/sources/httpErrors.ts';
import type { VideoSource } from '../../core/sources/types.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const log = createLogger('silent');
/** The configured default (SOURCE_WAIT_BUDGET_MS): these sources answer at once. */
const budget = loadConfig({}).SOURCE_WAIT_BUDGET_MS;
const failing = (name: VideoSource['name'], error: Error): VideoSource => ({
  name,
  resolveChannel: async () => Promise.reject(error),
  listVideos: async () => ({ videos: [] }),
});
const unknowing = (name: VideoSource['name']): VideoSource => ({
  name,
  resolveChannel: async () => undefined,
  listVideos: async () => ({ videos: [] }),
});
const query = { kind: 'handle', handle: '@nobody-at-all' } as const;

describe('resolveChannel', () => {
  it('is a 503 only when every source failed and a retry could help (a failure was transient)', async () => {
    const sources = [
      failing('archive', new DefiniteError('archive answered 403', 403)),
      failing('youtube_api', new TransientError('youtube answered 500', 500)),
    ];
    await expect(resolveChannel(db.sql, sources, query, log, budget)).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: expect.stringContaining('youtube_api: youtube answered 500'),
    });
  });

  it('is "unknown" (404) when every source failed definitely, or one answered', async () => {
    expect(
      await resolveChannel(
        db.sql,
        [failing('archive', new DefiniteError('403', 403)), failing('youtube_api', new DefiniteError('404', 404))],
        query,
        log,
        budget,
      ),
    ).toBeUndefined();
    expect(
      await resolveChannel(db.sql, [failing('archive', new TransientError('timeout')), unknowing('youtube_api')], query, log, budget),
    ).toBeUndefined();
    expect(await resolveChannel(db.sql, [], query, log, budget)).toBeUndefined();
  });
});

describe('crawl totals', () => {
  it('add a batch to the whole and to its source, keeping a source error until another replaces it', () => {
    const first = addBatch({}, 'archive', { videos: 3, inserted: 2, changed: 3, failure: 'archive answered 403' });
    expect(first).toEqual({ videos: 3, new: 2, sources: { archive: { videos: 3, changed: 3, error: 'archive answered 403' } } });
    const second = addBatch(first, 'archive', { videos: 2, inserted: 0, changed: 1 });
    expect(second).toEqual({ videos: 5, new: 2, sources: { archive: { videos: 5, changed: 4, error: 'archive answered 403' } } });
    expect(addBatch(second, 'wayback', { videos: 0, inserted: 0, changed: 0 }).sources).toEqual({
      ...second.sources,
      wayback: { videos: 0, changed: 0 },
    });
  });
});
