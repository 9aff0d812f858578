import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

// sql/022 and 023: inserts write history rows per statement, updates per row whose status or reason
// changed; these pin what the single per-row trigger before them wrote, statement by statement.
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await db.sql`insert into channels (channel_id) values ('UCtriggers0000000000000a')`;
});
afterAll(async () => db?.drop());

const id = (n: number) => `trig${String(n).padStart(7, '0')}`;
const history = (ids: string[]) => db.sql<{ videoId: string; status: string; previous: string | null; reason: string | null }[]>`
  select video_id as "videoId", status, previous_status as previous, reason from video_status_history
  where video_id = any(${ids}) order by video_id, id`;

describe('status history triggers', () => {
  it('writes one row per inserted video, one per changed status or reason, none for other updates', async () => {
    const ids = [1, 2, 3, 4].map(id);
    await db.sql`insert into videos (video_id, channel_id, status, status_reason)
      select v, 'UCtriggers0000000000000a', 'deleted', 'private' from unnest(${ids}::text[]) v`;
    // One statement: a status change, a reason change, a change of neither, and a row left alone.
    await db.sql`update videos set
        status = case video_id when ${ids[0]!} then 'live' else status end,
        status_reason = case video_id when ${ids[0]!} then null when ${ids[1]!} then 'copyright' else status_reason end,
        title = 'retitled'
      where video_id = any(${ids.slice(0, 3)})`;
    // An upsert whose conflicting row changes status, beside a new video.
    await db.sql`insert into videos (video_id, channel_id, status) values (${ids[3]!}, 'UCtriggers0000000000000a', 'live'), (${id(5)}, 'UCtriggers0000000000000a', 'live')
      on conflict (video_id) do update set status = excluded.status, status_reason = null`;
    expect(await history([...ids, id(5)])).toEqual([
      { videoId: ids[0], status: 'deleted', previous: null, reason: 'private' },
      { videoId: ids[0], status: 'live', previous: 'deleted', reason: null },
      { videoId: ids[1], status: 'deleted', previous: null, reason: 'private' },
      { videoId: ids[1], status: 'deleted', previous: 'deleted', reason: 'copyright' },
      { videoId: ids[2], status: 'deleted', previous: null, reason: 'private' },
      { videoId: ids[3], status: 'deleted', previous: null, reason: 'private' },
      { videoId: ids[3], status: 'live', previous: 'deleted', reason: null },
      { videoId: id(5), status: 'live', previous: null, reason: null },
    ]);
  });
});
