import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { connect, withDatabaseName, type Sql } from '../../core/db/database.ts';
import { migrate } from '../../core/db/migrate.ts';
import { readMigrations } from '../../core/db/readMigrations.ts';
import { createLogger } from '../../core/log.ts';

// Upgrading a database whose tracks were stored with yt-dlp's names as their language: migrate()
// as the service runs it at start, from migration 030 with the rows an import of that time stored.
const name = `afterimage_migration_${randomBytes(6).toString('hex')}`;
let admin: Sql;
let sql: Sql;
let url: string;
const channelId = 'UCmigration031000000000x';
const videoId = 'DQacCB9tDaw';
const ids: Record<string, string> = {};

const hash = (text: string) => createHash('sha256').update(text).digest('hex');

async function storeOld(language: string, kind: string, version: number, content: string): Promise<string> {
  const cues = JSON.stringify([{ startMs: 0, endMs: 1000, text: content }]);
  const [row] = await sql<{ id: string }[]>`
    insert into subtitle_tracks (video_id, language, kind, source, format, version, cues, cue_count, text_bytes, duration_ms, original_bytes, content_hash, origin_url)
    values (${videoId}, ${language}, ${kind}, 'archive', 'vtt', ${version}, ${cues}::text::json, 1, ${content.length}, 1000, 100, ${hash(content)},
      ${`file:///archive/GPT-4o.${language}.vtt`})
    returning id::text`;
  return row!.id;
}

beforeAll(async () => {
  const serverUrl = inject('serverUrl');
  admin = connect(withDatabaseName(serverUrl, 'postgres'), { max: 1, role: 'test' });
  await admin.unsafe(`create database ${name}`);
  url = withDatabaseName(serverUrl, name);
  sql = connect(url, { max: 2, role: 'test' });
  // The database as migrate() left it before 031: every earlier migration applied and recorded.
  for (const migration of (await readMigrations()).filter((m) => m.version < 31)) {
    await sql.begin(async (tx) => {
      await tx.unsafe(migration.body);
      await tx`create table if not exists schema_migrations (version integer primary key, name text not null, checksum text not null, applied_at timestamptz not null default now())`;
      await tx`insert into schema_migrations (version, name, checksum) values (${migration.version}, ${migration.name}, ${migration.checksum})`;
    });
  }
  await sql`insert into channels (channel_id, title) values (${channelId}, 'OpenAI')`;
  await sql`insert into videos (video_id, channel_id, title, caption_languages) values (${videoId}, ${channelId}, 'Introducing GPT-4o',
    ${sql.json([
      { language: 'en-uYU-mmqFLq8', kind: 'manual' },
      { language: 'en-orig', kind: 'auto' },
      { language: 'de-en', kind: 'auto' },
    ])})`;
  // What an import stored from <base>.en-uYU-mmqFLq8.vtt, <base>.en.vtt, <base>.en-orig.vtt (the
  // speech track, also written as en), <base>.de-en.vtt (German from the manual en).
  ids.named = await storeOld('en-uYU-mmqFLq8', 'manual', 1, 'CART captions');
  ids.manual = await storeOld('en', 'manual', 1, 'manual captions');
  ids.auto = await storeOld('en', 'auto', 1, 'speech recognition');
  ids.orig = await storeOld('en-orig', 'auto', 1, 'speech recognition');
  ids.origNewer = await storeOld('en-orig', 'auto', 2, 'speech recognition, corrected');
  ids.translated = await storeOld('de-en', 'translated', 1, 'Untertitel');
  await sql`insert into transcripts (video_id, state, track_id) values (${videoId}, 'completed', ${ids.orig!})`;
  const [user] = await sql<{ id: string }[]>`insert into users (email, tier) values ('migration031@example.org', 'pro') returning id`;
  await sql`insert into summaries (video_id, channel_id, owner_id, status, transcript_track_id, transcript_language, transcript_kind, transcript_version)
    values (${videoId}, ${channelId}, ${user!.id}, 'generating', ${ids.named!}, 'en-uYU-mmqFLq8', 'manual', 1)`;
}, 120_000);

afterAll(async () => {
  await sql?.end({ timeout: 5 });
  await admin?.unsafe(`drop database if exists ${name} with (force)`);
  await admin?.end();
});

describe('migration 031 and its data step', () => {
  it("splits stored names into language and track id, joins a name's double to its track, and keeps what points at them", async () => {
    const { applied } = await migrate(sql, url, createLogger('silent'));
    expect(applied).toContain('031_track_ids.sql');

    const tracks = await sql`
      select id::text, language, track_id as "trackId", kind, version from subtitle_tracks order by language, kind, track_id nulls first, version`;
    expect(tracks).toEqual([
      { id: ids.translated, language: 'de', trackId: null, kind: 'translated', version: 1 },
      { id: ids.auto, language: 'en', trackId: null, kind: 'auto', version: 1 },
      // en-orig's first version was en's speech track again: dropped; its new content is en's next version.
      { id: ids.origNewer, language: 'en', trackId: null, kind: 'auto', version: 2 },
      { id: ids.manual, language: 'en', trackId: null, kind: 'manual', version: 1 },
      { id: ids.named, language: 'en', trackId: 'uYU-mmqFLq8', kind: 'manual', version: 1 },
    ]);
    const [transcript] = await sql`select track_id::text as "trackId" from transcripts where video_id = ${videoId}`;
    expect(transcript!.trackId).toBe(ids.auto);
    const [summary] =
      await sql`select transcript_track_id::text as "trackId", transcript_language as language, transcript_version as version from summaries`;
    expect(summary).toEqual({ trackId: ids.named, language: 'en', version: 1 });
    const [video] = await sql<{ captions: Array<{ language: string; kind: string }> }[]>`
      select caption_languages as captions from videos where video_id = ${videoId}`;
    const announced = video!.captions.map((entry) => `${entry.language} ${entry.kind}`).sort();
    expect(announced).toEqual(['de auto', 'de translated', 'en auto', 'en manual']);
  });

  it('keeps a named track apart from the unnamed one of its language, and each unnamed track one track', async () => {
    const latest =
      await sql`select language, track_id as "trackId", kind, version from latest_subtitle_tracks where kind = 'manual' order by track_id nulls first`;
    expect(latest).toEqual([
      { language: 'en', trackId: null, kind: 'manual', version: 1 },
      { language: 'en', trackId: 'uYU-mmqFLq8', kind: 'manual', version: 1 },
    ]);
    await expect(storeOld('en', 'manual', 1, 'another manual track')).rejects.toThrow(/subtitle_tracks_track_version_key/);
    await expect(sql`update subtitle_tracks set track_id = 'not an id' where id = ${ids.named!}`).rejects.toThrow(
      /subtitle_tracks_track_id_check/,
    );
  });
});
