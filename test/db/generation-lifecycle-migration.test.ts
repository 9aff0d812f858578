import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { connect, withDatabaseName, type Sql } from '../../core/db/database.ts';
import { readMigrations } from '../../core/db/readMigrations.ts';

// sql/027 on a database of migration 026: summaries' 'ready' becomes 'generated' with the browse counts
// and videos.has_summary unchanged, and a stenogram's charge keeps its key as the subject to refund.
const name = `afterimage_migration_${randomBytes(6).toString('hex')}`;
let admin: Sql;
let sql: Sql;
const channelId = 'UCmigration027000000000x';
const videos = ['migrate0001', 'migrate0002'];

const facets = () =>
  sql<
    { facet: string; language: string; value: string; count: number }[]
  >`select facet, language, value, count from summary_facets order by 1, 2, 3`;

beforeAll(async () => {
  const serverUrl = inject('serverUrl');
  admin = connect(withDatabaseName(serverUrl, 'postgres'), { max: 1, role: 'test' });
  await admin.unsafe(`create database ${name}`);
  sql = connect(withDatabaseName(serverUrl, name), { max: 2, role: 'test' });
  for (const migration of (await readMigrations()).filter((m) => m.version < 27)) await sql.begin((tx) => tx.unsafe(migration.body));
  const [user] = await sql<{ id: string }[]>`insert into users (email, tier) values ('migration@example.org', 'pro') returning id`;
  const [key] = await sql<
    { id: string }[]
  >`insert into api_keys (user_id, key_hash, key_prefix, scope) values (${user!.id}, ${randomBytes(32)}, 'tsk_abcdef', 3) returning id`;
  await sql`insert into channels (channel_id, title) values (${channelId}, 'Migrations')`;
  for (const videoId of videos) await sql`insert into videos (video_id, channel_id, title) values (${videoId}, ${channelId}, 'A video')`;
  await sql`
    insert into summaries (video_id, channel_id, owner_id, status, title, tldr, key_points, detailed_summary, tags, language, llm_model, generated_at)
    values (${videos[0]!}, ${channelId}, ${user!.id}, 'ready', 'T', 'tl;dr', '[]', 'D', '{lathes,metal}', 'en', 'afterimage-extractive-1', now())`;
  await sql`insert into summaries (video_id, channel_id, owner_id, status) values (${videos[1]!}, ${channelId}, ${user!.id}, 'generating')`;
  await sql`insert into stenograms (owner_id, video_id, api_key_id, charged_window_start) values (${user!.id}, ${videos[1]!}, ${key!.id}, '2026-01-01T00:00:00Z')`;
}, 60_000);

afterAll(async () => {
  await sql?.end({ timeout: 5 });
  await admin?.unsafe(`drop database if exists ${name} with (force)`);
  await admin?.end();
});

describe('migration 027', () => {
  it('moves ready summaries to generated, keeping the counts, has_summary and the charge to refund', async () => {
    const before = await facets();
    expect(before.length).toBeGreaterThan(0);
    const [migration] = (await readMigrations()).filter((m) => m.version === 27);
    await sql.begin((tx) => tx.unsafe(migration!.body));

    expect(await sql`select video_id, status from summaries order by video_id`).toEqual([
      { video_id: videos[0], status: 'generated' },
      { video_id: videos[1], status: 'generating' },
    ]);
    expect(await facets()).toEqual(before);
    expect((await sql`select has_summary from videos where video_id = ${videos[0]!}`)[0]!.has_summary).toBe(true);
    // The rewritten trigger counts 'generated': deleting the summary takes its counts away.
    await sql`delete from summaries where video_id = ${videos[0]!}`;
    expect(await facets()).toEqual([]);
    expect((await sql`select has_summary from videos where video_id = ${videos[0]!}`)[0]!.has_summary).toBe(false);
    await expect(sql`update summaries set status = 'ready' where video_id = ${videos[1]!}`).rejects.toThrow(/summaries_status/);
    const [stenogram] = await sql`select s.charged_subject = k.id as "keyIsSubject" from stenograms s, api_keys k`;
    expect(stenogram!.keyIsSubject).toBe(true);
  });
});
