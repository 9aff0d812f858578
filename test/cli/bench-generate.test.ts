import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sql } from '../../core/db/database.ts';
import { parseJson, runCli, runCommand } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

// `afterimage bench generate`: a seeded synthetic corpus written into the service's database.

const VIDEOS = 1_500;
let first: TestDatabase;
let second: TestDatabase;

beforeAll(async () => {
  [first, second] = await Promise.all([createTestDatabase(), createTestDatabase()]);
});
afterAll(async () => {
  await Promise.all([first?.drop(), second?.drop()]);
});

/** `afterimage bench generate`: in this process, or (generateSpawned) as a real process, as the first case runs it. */
const generate = (db: TestDatabase, ...args: string[]) =>
  runCommand(['bench', 'generate', '--videos', String(VIDEOS), ...args, '--json'], { DATABASE_URL: db.url });
const generateSpawned = (db: TestDatabase, ...args: string[]) =>
  runCli(['bench', 'generate', '--videos', String(VIDEOS), ...args, '--json'], { DATABASE_URL: db.url });

/** Everything generated about every video, in one digest. */
async function digest(sql: Sql): Promise<string> {
  const [row] = await sql<{ md5: string }[]>`
    select md5(string_agg(concat_ws('|', v.video_id, v.channel_id, c.title, v.title, v.description, array_to_string(v.tags, ','), v.language, v.duration_seconds,
      v.view_count, v.upload_date, v.status, v.status_reason, v.reuploaded_as, v.has_subtitles, v.has_summary, v.video_file_url), E'\\n' order by v.video_id)) as md5
    from videos v join channels c on c.channel_id = v.channel_id`;
  return row!.md5;
}

describe('afterimage bench generate', () => {
  it('writes the videos and channels asked for, in the mix of languages and statuses it reports', async () => {
    const result = await generateSpawned(first, '--seed', '7', '--channels', '12');
    expect(result.code, result.stderr).toBe(0);
    const report = parseJson(result);
    expect(report).toMatchObject({ seed: 7, videos: VIDEOS, channels: 12 });
    expect(['trending-datasets', 'built-in']).toContain(report.vocabulary);
    expect(report.videosPerSecond).toBeGreaterThan(0);
    expect(result.stderr).toMatch(/generating/);

    const [counts] = await first.sql<
      { videos: number; channels: number; history: number; subtitles: number; summaries: number; files: number; cjk: number }[]
    >`
      select (select count(*) from videos)::int as videos, (select count(*) from channels)::int as channels,
        (select count(*) from video_status_history)::int as history,
        (select count(*) filter (where has_subtitles) from videos)::int as subtitles,
        (select count(*) filter (where has_summary) from videos)::int as summaries,
        (select count(*) filter (where video_file_url is not null) from videos)::int as files,
        (select count(*) from videos where title ~ '[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]')::int as cjk`;
    expect(counts).toMatchObject({ videos: VIDEOS, channels: 12, history: VIDEOS });
    expect(counts!.subtitles / VIDEOS).toBeGreaterThan(0.33);
    expect(counts!.subtitles / VIDEOS).toBeLessThan(0.47);
    expect(counts!.summaries).toBeGreaterThan(0);
    expect(counts!.summaries / VIDEOS).toBeLessThan(0.08);
    expect(counts!.files / VIDEOS).toBeGreaterThan(0.05);
    expect(counts!.files / VIDEOS).toBeLessThan(0.15);
    expect(counts!.cjk).toBeGreaterThan(0);

    const languages: Record<string, number> = Object.fromEntries(
      (await first.sql<{ language: string; n: number }[]>`select language, count(*)::int as n from videos group by language`).map((row) => [
        row.language,
        row.n,
      ]),
    );
    expect(languages).toEqual(report.languages);
    expect(languages.en! / VIDEOS).toBeGreaterThan(0.45);
    expect(languages.en! / VIDEOS).toBeLessThan(0.65);
    for (const language of ['fr', 'ru']) expect(languages[language]! / VIDEOS).toBeGreaterThan(0.1);
    expect(languages.ja).toBeGreaterThan(0);
    const statuses: Record<string, number> = Object.fromEntries(
      (await first.sql<{ status: string; n: number }[]>`select status, count(*)::int as n from videos group by status`).map((row) => [
        row.status,
        row.n,
      ]),
    );
    expect(statuses).toEqual(report.statuses);
    expect(statuses.live! / VIDEOS).toBeGreaterThan(0.85);
    expect(statuses.deleted! / VIDEOS).toBeGreaterThan(0.02);
    expect(statuses.deleted! / VIDEOS).toBeLessThan(0.09);

    // A word it calls very common is in ≥ 30 % of the videos, by the search index too.
    const [common] = report.commonWords as Array<{ word: string; videos: number }>;
    expect(common!.videos).toBeGreaterThanOrEqual(0.3 * VIDEOS);
    const [indexed] = await first.sql<
      { n: number }[]
    >`select count(*)::int as n from videos where fts @@ phraseto_tsquery('afterimage', fts_fold(${common!.word}))`;
    expect(indexed!.n).toBeGreaterThanOrEqual(0.3 * VIDEOS);
  }, 120_000);

  it('writes the same corpus for the same seed, refuses to write a seed twice, and adds a new seed beside it', async () => {
    const again = await generate(second, '--seed', '7', '--channels', '12');
    expect(again.code, again.stderr).toBe(0);
    expect(await digest(second.sql)).toBe(await digest(first.sql));

    const twice = await generate(first, '--seed', '7', '--channels', '12');
    expect(twice.code).toBe(1);
    expect(parseJson(twice).error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/seed 7 is already stored/) });

    const other = await generate(first, '--seed', '8', '--channels', '12');
    expect(other.code, other.stderr).toBe(0);
    const [counts] = await first.sql<
      { videos: number; channels: number }[]
    >`select (select count(*) from videos)::int as videos, (select count(*) from channels)::int as channels`;
    expect(counts).toEqual({ videos: 2 * VIDEOS, channels: 24 });
  }, 120_000);

  it('says how to call it', async () => {
    const missing = await runCommand(['bench', 'generate', '--json'], { DATABASE_URL: first.url });
    expect(missing.code).toBe(2);
    expect(parseJson(missing).error.message).toMatch(/--videos takes a whole number/);
    const unknown = await runCommand(['bench', 'nope'], { DATABASE_URL: first.url });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/usage: npx afterimage bench generate/);
  });
});
