import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCrontab } from 'graphile-worker';
import { refreshSearchWords } from '../../core/fts/postgres.ts';
import { crontab } from '../../pipeline/tasks/index.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { corpusChannel, idOf, storeCorpus } from './corpus.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await storeCorpus(db.sql);
});
afterAll(() => db?.drop());

const count = async (word: string) =>
  (await db.sql<{ videos: number }[]>`select videos from fts_words where word = ${word}`)[0]?.videos ?? 0;

describe('did-you-mean vocabulary', () => {
  it('counts every folded word at first, then adds only what changed since', async () => {
    const first = await refreshSearchWords(db.sql);
    expect(first.videos).toBe(38);
    expect(await count('lathe')).toBe(3);
    expect(await count('cafe')).toBe(2);
    expect(await count('ежик')).toBe(1);
    expect(await count('café')).toBe(0);
    expect((await refreshSearchWords(db.sql)).videos).toBe(0);
    await db.sql`insert into videos (video_id, channel_id, title) values (${idOf('new-lathe')}, ${corpusChannel}, 'Another lathe')`;
    expect(await refreshSearchWords(db.sql)).toMatchObject({ videos: 1 });
    expect(await count('lathe')).toBe(4);
    expect(await count('another')).toBe(1);
  });

  it('is refreshed by the crontab every ten minutes', () => {
    const item = parseCrontab(crontab).find((entry) => entry.task === 'refresh_search_words');
    const at = (min: number) => ({ min, hour: 3, date: 1, month: 1, dow: 1 });
    expect(item!.match(at(20))).toBe(true);
    expect(item!.match(at(25))).toBe(false);
  });
});
