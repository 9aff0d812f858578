import type { Sql } from '../../../core/db/database.ts';
import { appendEvents } from '../../../core/events/events.ts';
import { searchEvents, type SearchEvent } from '../../../core/events/searchEvents.ts';
import type { VideoObject } from '../../../core/videos/videoObject.ts';
import { sleep } from '../lib/harness.ts';
import { CHANNEL_ID, COMMITS, COMMITS_PER_SECOND, eventsInCommit } from './shape.ts';

/** A search:video payload shaped and sized like a real one (a VideoObject, about 700 bytes). */
function videoPayload(seq: number, idx: number) {
  const videoId = `v${String(seq).padStart(5, '0')}_${String(idx).padStart(4, '0')}`.slice(0, 11);
  return {
    videoId,
    title: `Restoring a vintage lathe from scrap, part ${seq}.${idx} (full build)`,
    description: `Upload ${seq} of the workshop channel. Today we take the old lathe apart, clean every part and put it back together.\n\nhttps://example.org/${seq}`,
    channelId: CHANNEL_ID,
    channelTitle: 'Bench fan-out channel',
    duration: 600 + seq,
    viewCount: 1000 * seq + idx,
    uploadDate: '2024-06-01',
    status: 'live',
    thumbnailUrl: `https://i.ytimg.com/vi/${videoId}/hqdefault.jpg`,
    archiveUrl: null,
    videoFileUrl: null,
    hasVideo: false,
    hasSubtitles: false,
    hasSummary: false,
    tags: ['afterimage', 'restoration', 'workshop'],
    language: 'en',
    captions: [],
    sources: ['youtube_api'],
  };
}

interface Commit {
  seq: number;
  events: number;
  scheduledAt: number;
  sentAt: number;
  ackAt: number;
  commitMs: number;
  lateMs: number;
}

/** COMMITS transactions at COMMITS_PER_SECOND on a fixed schedule, each appending 1–10 events to the crawl's stream. */
export async function publish(sql: Sql, stream: string): Promise<Commit[]> {
  const commits: Commit[] = [];
  const interval = 1000 / COMMITS_PER_SECOND;
  const start = performance.now() + 50;
  for (let seq = 0; seq < COMMITS; seq++) {
    const scheduledAt = start + seq * interval;
    const wait = scheduledAt - performance.now();
    if (wait > 0) await sleep(wait);
    const n = eventsInCommit(seq);
    const began = performance.now();
    const sentAt = performance.timeOrigin + began;
    // Each payload carries the stamps the clients time the delivery by (seq, idx, sentAt) beside its own fields.
    const stamp = (idx: number) => ({ seq, idx, sentAt });
    const events: SearchEvent[] = [
      searchEvents.progress({ stage: 'youtube_api', percent: Math.floor((seq / COMMITS) * 100), videosInBatch: n - 1, ...stamp(0) }),
    ];
    // videoPayload stands in for a VideoObject (not every field of one).
    for (let idx = 1; idx < n; idx++)
      events.push(searchEvents.video({ ...(videoPayload(seq, idx) as unknown as VideoObject), ...stamp(idx) }));
    await sql.begin((tx) => appendEvents(tx, stream, events));
    const acked = performance.now();
    commits.push({
      seq,
      events: n,
      scheduledAt,
      sentAt,
      ackAt: performance.timeOrigin + acked,
      commitMs: acked - began,
      lateMs: began - scheduledAt,
    });
  }
  return commits;
}
