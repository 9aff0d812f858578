import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sql } from '../../core/db/database.ts';
import { browseSummaries } from '../../core/summaries/browseSummaries.ts';
import { createDatabaseBefore } from '../support/db.ts';

// sql/037 on a database of the migrations before it: the summaries already stored get their list entries
// (public generated ones only, each tag once), and the lists read them at once.
let db: Awaited<ReturnType<typeof createDatabaseBefore>>;
let sql: Sql;
const channelId = 'UCmigration037000000000x';
const videos = ['migrate0371', 'migrate0372', 'migrate0373', 'migrate0374', 'migrate0375'];

const entries = () =>
  sql<{ video: string; tag: string; language: string }[]>`
    select s.video_id as video, e.tag, e.language from summary_list_entries e join summaries s on s.id = e.summary_id order by 1, 2`;
const listed = async (filters: Parameters<typeof browseSummaries>[1]) =>
  (await browseSummaries(sql, filters, { offset: 0, limit: 20 })).rows.map((row) => row.video_id);

beforeAll(async () => {
  db = await createDatabaseBefore(37);
  sql = db.sql;
  const [user] = await sql<{ id: string }[]>`insert into users (email, tier) values ('migration037@example.org', 'pro') returning id`;
  await sql`insert into channels (channel_id, title) values (${channelId}, 'Migrations')`;
  for (const videoId of videos) await sql`insert into videos (video_id, channel_id, title) values (${videoId}, ${channelId}, 'A video')`;
  const generated = (videoId: string, tags: string, language: string, at: string, owner: string | null = null) => sql`
    insert into summaries (video_id, channel_id, owner_id, private, status, title, tldr, key_points, detailed_summary, tags, language, llm_model, generated_at)
    values (${videoId}, ${channelId}, ${owner}, ${owner !== null}, 'generated', 'T', 'tl;dr', '[]', 'D', ${tags}::text[], ${language}, 'afterimage-extractive-1', ${at})`;
  // The same tag twice in one summary is one entry; a summary without tags is still in the lists without a tag.
  await generated(videos[0]!, '{lathes,metal,metal}', 'en', '2026-01-01T10:00:00Z');
  await generated(videos[1]!, '{}', 'fr', '2026-01-01T11:00:00Z');
  await generated(videos[2]!, '{metal}', 'en', '2026-01-01T11:00:00Z', user!.id);
  await sql`insert into summaries (video_id, channel_id, status, error) values (${videos[3]!}, ${channelId}, 'failed', 'broke')`;
  await sql`insert into summaries (video_id, channel_id, status) values (${videos[4]!}, ${channelId}, 'generating')`;
}, 60_000);

afterAll(async () => {
  await db?.drop();
});

describe('migration 037', () => {
  it('lists the summaries already stored, and keeps listing the ones stored after it', async () => {
    await db.apply();

    expect(await entries()).toEqual([
      { video: videos[0], tag: '', language: 'en' },
      { video: videos[0], tag: 'lathes', language: 'en' },
      { video: videos[0], tag: 'metal', language: 'en' },
      { video: videos[1], tag: '', language: 'fr' },
    ]);
    expect(await listed({})).toEqual([videos[1], videos[0]]);
    expect(await listed({ tag: 'metal', channelId, language: 'en' })).toEqual([videos[0]]);

    await sql`
      update summaries set status = 'generated', title = 'T', tldr = 'tl;dr', key_points = '[]', detailed_summary = 'D', tags = '{metal}',
        language = 'en', llm_model = 'afterimage-extractive-1', generated_at = '2026-01-01T12:00:00Z' where video_id = ${videos[4]!}`;
    expect(await listed({ tag: 'metal' })).toEqual([videos[4], videos[0]]);
    await sql`delete from summaries where video_id = ${videos[0]!}`;
    expect(await listed({ tag: 'metal' })).toEqual([videos[4]]);
    expect((await entries()).map((entry) => entry.video)).not.toContain(videos[0]);
  });
});
