import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../core/db/migrate.ts';
import { parseQuery } from '../../core/fts/query.ts';
import { searchSubtitles } from '../../core/fts/subtitles.ts';
import { createLogger } from '../../core/log.ts';
import { createDatabaseBefore } from '../support/db.ts';

// Upgrading a database whose transcripts have only their windows (migration 041 and before): migrate()
// gathers each transcript's words, which exclusions then read, and keeps them with the windows after.
let db: Awaited<ReturnType<typeof createDatabaseBefore>>;
const channelId = 'UCmigration042000000000x';
const [stored, later] = ['wOrds042stq', 'wOrds042lat'];
// Forty cues, five windows: merged in pairs and one left over, the last, which says the word looked for.
const cues = (said: string) =>
  Array.from({ length: 40 }, (_, i) => ({ startMs: i * 2_000, endMs: (i + 1) * 2_000, text: i === 35 ? said : `ferry number ${i + 1}` }));

async function addTranscript(videoId: string, said: string) {
  const sql = db.sql;
  const json = JSON.stringify(cues(said));
  await sql`insert into videos (video_id, channel_id, title, status) values (${videoId}, ${channelId}, 'A crossing', 'live')`;
  const [track] = await sql<{ id: string }[]>`
    insert into subtitle_tracks (video_id, language, kind, source, format, version, cues, cue_count, text_bytes, duration_ms, original_bytes, content_hash)
    values (${videoId}, 'en', 'manual', 'archive', 'vtt', 1, ${json}::text::json, 40, 800, 80000, 1200, ${createHash('sha256').update(json).digest('hex')})
    returning id::text`;
  await sql`insert into transcripts (video_id, state, track_id) values (${videoId}, 'completed', ${track!.id})`;
}

const search = (q: string) =>
  searchSubtitles(db.sql, { query: parseQuery(q), filters: {}, sort: 'date-desc', offset: 0, limit: 10 }, 10_000);

beforeAll(async () => {
  db = await createDatabaseBefore(42);
  await db.sql`insert into channels (channel_id, title) values (${channelId}, 'Crossings')`;
  await addTranscript(stored, 'the lighthouse at the end');
}, 120_000);

afterAll(() => db?.drop());

describe('migration 042', () => {
  it("gathers the words of the transcripts already stored, every window's, and keeps them for transcripts written after", async () => {
    const { applied } = await migrate(db.sql, db.url, createLogger('silent'));
    expect(applied).toContain('042_transcript_words.sql');
    await addTranscript(later, 'a harbour at the end');
    const differing = await db.sql`
      select t.video_id from transcripts t join transcript_words tw using (video_id)
      where tw.words <> (select array_to_tsvector(array_agg(distinct lexeme)) from transcript_windows w, unnest(w.fts) as u
                         where w.video_id = t.video_id)`;
    expect(differing).toEqual([]);
    expect(await db.sql`select video_id from transcript_words order by video_id`).toHaveLength(2);
    expect((await search('ferry -lighthouse')).videoIds).toEqual([later]);
    expect((await search('ferry -harbour')).videoIds).toEqual([stored]);
    expect((await search('ferry -"at the end"')).videoIds).toEqual([]);
  });
});
