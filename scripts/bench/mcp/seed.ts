import type { Sql } from '../../../core/db/database.ts';
import { fakeChannelId, fakeVideoId } from '../../../test/kit/ids.ts';
import { random } from '../../../test/kit/random.ts';
import { CHANNELS, VIDEOS, VOCABULARY } from './shape.ts';

export interface Seeded {
  videoIds: string[];
  words: string[];
}

const word = (i: number) => `w${i.toString(36)}x`;

/** CHANNELS channels and VIDEOS live videos, titles of 6 words from a VOCABULARY-word list, in plain SQL. */
export async function seed(sql: Sql): Promise<Seeded> {
  const rnd = random(42);
  const channelIds = Array.from({ length: CHANNELS }, (_, i) => fakeChannelId(`mcp-bench-channel-${i}`));
  await sql`insert into channels (channel_id, title) select id, 'Bench channel ' || id from unnest(${channelIds}::text[]) as x(id)`;
  const videoIds = Array.from({ length: VIDEOS }, (_, i) => fakeVideoId(`mcp-bench-video-${i}`));
  const titles = videoIds.map(() => Array.from({ length: 6 }, () => word(Math.floor(rnd() * VOCABULARY))).join(' '));
  await sql`
    insert into videos (video_id, channel_id, title, description, duration_seconds, view_count, upload_date, status)
    select id, channel, title, 'Description of ' || title, 60 + (ord * 37) % 3600, (ord * 7919) % 1000000, date '2016-01-01' + (ord % 3000)::int, 'live'
    from unnest(${videoIds}::text[], ${videoIds.map((_, i) => channelIds[i % CHANNELS]!)}::text[], ${titles}::text[]) with ordinality as x(id, channel, title, ord)`;
  return { videoIds, words: Array.from({ length: 50 }, (_, i) => word(i * 5)) };
}
