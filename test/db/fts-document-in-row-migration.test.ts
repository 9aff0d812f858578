import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sql } from '../../core/db/database.ts';
import { createPostgresBackend } from '../../core/fts/postgres.ts';
import { parseQuery } from '../../core/fts/query.ts';
import { createDatabaseBefore, createTestDatabase, type TestDatabase } from '../support/db.ts';

// sql/041: a video's search document stays in its row, where a phrase check reads it, even when the video
// is over the TOAST threshold (its description goes out of line instead); rows stored before are rewritten
// in place, and every phrase finds what it found before.
const channelId = 'UCmigration041000000000x';

/** Words no generator would repeat (so the document does not compress into the row): 400 of them, about 3 KB of document. */
function longDescription(middle: string): string {
  let state = 41;
  const word = () =>
    Array.from({ length: 6 }, () => {
      state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
      return String.fromCharCode(97 + (state % 26));
    }).join('');
  const words = Array.from({ length: 400 }, word);
  words.splice(200, 0, middle);
  return `Gold rush ${words.join(' ')} and to the end.`;
}

const videos = [
  // Title, tags and description read as one text: "workshop lathe" spans title and tags, "milling gold" tags and description.
  { video_id: 'migrate0411', title: 'Old workshop', tags: '{lathe,milling}', description: longDescription('東京 旅行 watch can') },
  { video_id: 'migrate0412', title: 'Short one', tags: '{}', description: 'can watch 行旅' },
];

const outOfLine = (sql: Sql, column: 'fts' | 'description') =>
  sql<{ video_id: string }[]>`
    select video_id from videos where pg_column_toast_chunk_id(${sql(column)}) is not null order by video_id`.then((rows) =>
    rows.map((row) => row.video_id),
  );

async function storeVideos(sql: Sql, rows: typeof videos): Promise<void> {
  await sql`insert into channels (channel_id, title) values (${channelId}, 'Migrations') on conflict do nothing`;
  for (const v of rows) {
    await sql`insert into videos (video_id, channel_id, title, tags, description) values (${v.video_id}, ${channelId}, ${v.title}, ${v.tags}::text[], ${v.description})`;
  }
}

async function phrases(sql: Sql): Promise<Record<string, string[]>> {
  const backend = createPostgresBackend({ sql, timeoutMs: 5_000 });
  const found: Record<string, string[]> = {};
  for (const q of [
    '"workshop lathe"',
    '"milling gold"',
    '"watch can"',
    '"can watch"',
    '"and to"',
    '"旅行"',
    '"行旅"',
    '"京旅"',
    '"東京 旅行"',
  ]) {
    const page = await backend.search({ query: parseQuery(q), filters: {}, sort: 'date-desc', offset: 0, limit: 10 });
    found[q] = [...page.videoIds].sort();
  }
  return found;
}

const expectedPhrases = {
  '"workshop lathe"': ['migrate0411'],
  '"milling gold"': ['migrate0411'],
  '"watch can"': ['migrate0411'],
  '"can watch"': ['migrate0412'],
  '"and to"': ['migrate0411'],
  '"旅行"': ['migrate0411'],
  '"行旅"': ['migrate0412'],
  '"京旅"': ['migrate0411'],
  '"東京 旅行"': ['migrate0411'],
};

describe('migration 041', () => {
  let db: Awaited<ReturnType<typeof createDatabaseBefore>>;
  beforeAll(async () => {
    db = await createDatabaseBefore(41);
    await storeVideos(db.sql, videos);
  }, 60_000);
  afterAll(async () => {
    await db?.drop();
  });

  it('moves the search document of a video stored before into its row, and phrases find the same videos', async () => {
    const before = await db.sql<
      { video_id: string; updated_at: Date; fts: string }[]
    >`select video_id, updated_at, fts::text from videos order by video_id`;
    expect(await outOfLine(db.sql, 'fts')).toEqual(['migrate0411']);
    expect(await phrases(db.sql)).toEqual(expectedPhrases);

    await db.apply();

    expect(await outOfLine(db.sql, 'fts')).toEqual([]);
    expect(await outOfLine(db.sql, 'description')).toEqual(['migrate0411']);
    // Rewritten in place, triggers off: the same document, and nothing about the video counts as changed.
    expect(await db.sql`select video_id, updated_at, fts::text from videos order by video_id`).toEqual(before);
    expect(await phrases(db.sql)).toEqual(expectedPhrases);
    const [{ enabled }] = await db.sql<[{ enabled: number }]>`
      select count(*)::int as enabled from pg_trigger where tgrelid = 'videos'::regclass and not tgisinternal and tgenabled = 'O'`;
    expect(enabled).toBeGreaterThan(0);
    const [{ disabled }] = await db.sql<[{ disabled: number }]>`
      select count(*)::int as disabled from pg_trigger where tgrelid = 'videos'::regclass and not tgisinternal and tgenabled = 'D'`;
    expect(disabled).toBe(0);
  });
});

describe('search documents after migration 041', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await storeVideos(db.sql, videos);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('stay in the row of a video over the TOAST threshold, written or updated', async () => {
    expect(await outOfLine(db.sql, 'fts')).toEqual([]);
    expect(await phrases(db.sql)).toEqual(expectedPhrases);
    await db.sql`update videos set description = ${longDescription('watch can more')} where video_id = 'migrate0412'`;
    expect(await outOfLine(db.sql, 'fts')).toEqual([]);
    expect(await outOfLine(db.sql, 'description')).toEqual(['migrate0411', 'migrate0412']);
  });
});
