import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { connect, withDatabaseName, type Sql } from '../../core/db/database.ts';
import { migrate, readMigrations } from '../../core/db/migrate.ts';
import { parseQuery } from '../../core/fts/query.ts';
import { searchSubtitles } from '../../core/fts/subtitles.ts';
import { createLogger } from '../../core/log.ts';

// Upgrading a database whose transcripts were indexed whole (migration 035 and before): migrate() as the
// service runs it at start builds the windows of every transcript's chosen track.
const name = `afterimage_migration_${randomBytes(6).toString('hex')}`;
let admin: Sql;
let sql: Sql;
let url: string;
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
  const serverUrl = inject('serverUrl');
  admin = connect(withDatabaseName(serverUrl, 'postgres'), { max: 1, role: 'test' });
  await admin.unsafe(`create database ${name}`);
  url = withDatabaseName(serverUrl, name);
  sql = connect(url, { max: 2, role: 'test' });
  for (const migration of (await readMigrations()).filter((m) => m.version < 36)) {
    await sql.begin(async (tx) => {
      await tx.unsafe(migration.body);
      await tx`create table if not exists schema_migrations (version integer primary key, name text not null, checksum text not null, applied_at timestamptz not null default now())`;
      await tx`insert into schema_migrations (version, name, checksum) values (${migration.version}, ${migration.name}, ${migration.checksum})`;
    });
  }
  await sql`insert into channels (channel_id, title) values (${channelId}, 'Archive')`;
  await sql`insert into videos (video_id, channel_id, title, status) values (${videoId}, ${channelId}, 'An old talk', 'live')`;
  const json = JSON.stringify(cues);
  const [track] = await sql<{ id: string }[]>`
    insert into subtitle_tracks (video_id, language, kind, source, format, version, cues, cue_count, text_bytes, duration_ms, original_bytes, content_hash)
    values (${videoId}, 'en', 'manual', 'archive', 'vtt', 1, ${json}::text::json, 20, 400, 40000, 900, ${createHash('sha256').update(json).digest('hex')})
    returning id::text`;
  await sql`insert into transcripts (video_id, state, track_id) values (${videoId}, 'completed', ${track!.id})`;
}, 120_000);

afterAll(async () => {
  await sql?.end({ timeout: 5 });
  await admin?.unsafe(`drop database if exists ${name} with (force)`);
  await admin?.end();
});

describe('migration 036', () => {
  it("builds the windows of the transcripts already stored and drops the whole-transcript vector and the tracks' cue lines", async () => {
    const { applied } = await migrate(sql, url, createLogger('silent'));
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
      text: 'the old <mark>archive</mark> kept every word',
    });
    expect((await search('"ends across the boundary"')).videoIds).toEqual([videoId]);
  });
});
