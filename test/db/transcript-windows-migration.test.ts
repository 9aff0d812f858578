import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sql } from '../../core/db/database.ts';
import { migrate } from '../../core/db/migrate.ts';
import { parseQuery } from '../../core/fts/query.ts';
import { searchSubtitles } from '../../core/fts/subtitles.ts';
import { createLogger } from '../../core/log.ts';
import { createDatabaseBefore } from '../support/db.ts';

// Upgrading a database whose transcripts were indexed whole (migration 035 and before): migrate() as the
// service runs it at start builds the windows of every transcript's chosen track.
let db: Awaited<ReturnType<typeof createDatabaseBefore>>;
let sql: Sql;
const channelId = 'UCmigration036000000000x';
const videoId = 'wIndOws0360';
// Twenty cues 2 s apart: windows of cues 1–8, 9–16 and 17–20.
const cues = Array.from({ length: 20 }, (_, i) => ({
  startMs: i * 2_000,
  endMs: (i + 1) * 2_000,
  text:
    i === 9
      ? 'the old archive kept every word'
      : i === 15
        ? 'a phrase that ends'
        : i === 16
          ? 'across the boundary'
          : `cue number ${i + 1}`,
}));

beforeAll(async () => {
  db = await createDatabaseBefore(36);
  sql = db.sql;
  await sql`insert into channels (channel_id, title) values (${channelId}, 'Archive')`;
  await sql`insert into videos (video_id, channel_id, title, status) values (${videoId}, ${channelId}, 'An old talk', 'live')`;
  const json = JSON.stringify(cues);
  const [track] = await sql<{ id: string }[]>`
    insert into subtitle_tracks (video_id, language, kind, source, format, version, cues, cue_count, text_bytes, duration_ms, original_bytes, content_hash)
    values (${videoId}, 'en', 'manual', 'archive', 'vtt', 1, ${json}::text::json, 20, 400, 40000, 900, ${createHash('sha256').update(json).digest('hex')})
    returning id::text`;
  await sql`insert into transcripts (video_id, state, track_id) values (${videoId}, 'completed', ${track!.id})`;
}, 120_000);

afterAll(() => db?.drop());

describe('migration 036', () => {
  it("builds the windows of the transcripts already stored and drops the whole-transcript vector and the tracks' cue lines", async () => {
    const { applied } = await migrate(sql, db.url, createLogger('silent'));
    expect(applied).toContain('036_transcript_windows.sql');
    const windows = await sql<{ windowNo: number; first: string }[]>`
      select window_no as "windowNo", split_part(lines, E'\\n', 1) as first from transcript_windows where video_id = ${videoId} order by window_no`;
    expect(windows).toEqual([
      { windowNo: 0, first: '0 2000 cue number 1' },
      { windowNo: 1, first: '16000 18000 cue number 9' },
      { windowNo: 2, first: '32000 34000 across the boundary' },
    ]);
    const columns = await sql`
      select table_name, column_name from information_schema.columns
      where (table_name, column_name) in (('transcripts', 'fts'), ('subtitle_tracks', 'cue_lines'))`;
    expect(columns).toEqual([]);
    const search = (q: string) =>
      searchSubtitles(sql, { query: parseQuery(q), filters: {}, sort: 'relevance', offset: 0, limit: 10 }, 10_000);
    expect((await search('archive')).cues.get(videoId)!.cues[0]).toMatchObject({
      startMs: 18_000,
      text: [
        { text: 'the old ', marked: false },
        { text: 'archive', marked: true },
        { text: ' kept every word', marked: false },
      ],
    });
    expect((await search('"ends across the boundary"')).videoIds).toEqual([videoId]);
  });
});
