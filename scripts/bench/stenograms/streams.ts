import { request } from 'node:http';
import { createApiKey } from '../../../core/accounts/createApiKey.ts';
import { createUser } from '../../../core/accounts/createUser.ts';
import type { Sql } from '../../../core/db/database.ts';
import { renderVtt } from '../../../core/subtitles/renderVtt.ts';
import { storeTrack } from '../../../core/subtitles/store.ts';
import { refreshTranscript } from '../../../core/subtitles/transcript.ts';
import { updateTier } from '../../../core/tiers/updateTier.ts';
import { fakeVideoId } from '../../../test/kit/ids.ts';
import { mix32 } from '../../../test/kit/random.ts';
import { conversation } from '../lib/corpus.ts';
import { createSseParser } from '../lib/sse-parse.ts';
import { CHANNEL_ID, HOLD_MS, SEED, STENOGRAMS_PER_DAY, STREAMS, STREAM_TIMEOUT_MS, USERS } from './shape.ts';
import { sleep } from '../lib/harness.ts';

/** `videos` has STREAMS + 3: the burst's, then two generated one at a time before it (the route's first request, the idle reference), and the what-if's. */
export interface Prepared {
  users: Array<{ id: string; key: string }>;
  videos: Array<{ videoId: string; user: number; words: number; cues: number }>;
  cues: number;
  setupMs: number;
}

/** The users (Pro, one L3 key each, limits raised), a channel, its videos and a stored transcript each. */
export async function prepare(sql: Sql, minutes: number): Promise<Prepared> {
  const started = performance.now();
  await updateTier(sql, 'pro', {
    features: { stenograms: true },
    limits: { requestsPerMinute: null, apiStenogramsPerDay: STENOGRAMS_PER_DAY },
  });
  const users: Prepared['users'] = [];
  for (let i = 0; i < USERS; i++) {
    const user = await createUser(sql, { email: `stenograms-${minutes}-${i}@example.org`, tier: 'pro', isAdmin: false });
    users.push({ id: user.id, key: (await createApiKey(sql, { userId: user.id, scope: 'L3' })).key });
  }
  await sql`insert into channels (channel_id, title) values (${CHANNEL_ID}, 'Bench stenograms')`;
  const videos: Prepared['videos'] = [];
  for (let i = 0; i < STREAMS + 3; i++) {
    const videoId = fakeVideoId(`bench:stenograms:${minutes}:${i}`);
    const generated = conversation(minutes, mix32(SEED, 10_000 + minutes * 100 + i));
    // Stored as a fetch stores it: WebVTT (">> " for a speaker change), parsed and normalised by storeTrack.
    const text = renderVtt(
      generated.cues.map((cue) => ({
        startMs: Math.round(cue.start * 1000),
        endMs: Math.round(cue.end * 1000),
        text: cue.text,
        ...(cue.speakerChange ? { speakerChange: true } : {}),
      })),
    );
    await sql.begin(async (tx) => {
      await tx`insert into videos (video_id, channel_id, title, language, status) values (${videoId}, ${CHANNEL_ID}, ${`A ${minutes}-minute conversation, part ${i + 1}`}, 'en', 'live')`;
      const stored = await storeTrack(tx, { videoId, language: 'en', kind: 'manual', source: 'archive', text, formatHint: 'vtt' });
      if (!stored) throw new Error(`the transcript of ${videoId} stored no cue`);
      const { transcript: info } = await refreshTranscript(tx, videoId, { checked: true });
      if (info.state !== 'completed') throw new Error(`the transcript of ${videoId} is ${info.state}`);
    });
    videos.push({ videoId, user: i % USERS, words: generated.words, cues: generated.cues.length });
  }
  const [stored] = await sql<{ cues: number }[]>`select sum(cue_count)::int as cues from subtitle_tracks`;
  return { users, videos, cues: stored?.cues ?? 0, setupMs: performance.now() - started };
}

interface Received {
  id: string | undefined;
  type: string;
  at: number;
  bytes: number;
}

export interface StreamRecord {
  videoId: string;
  user: number;
  status: number;
  error: string | null;
  postedAt: number;
  headersAt: number;
  endedAt: number;
  events: Received[];
  final: string | null;
  /** stenogram:complete's metadata.words and its Markdown's UTF-8 bytes. */
  words: number | null;
  markdownBytes: number | null;
}

/** POST …/generate and reads its event stream to the end; every frame's arrival is performance.now(). */
export function generateStream(base: URL, videoId: string, user: number, key: string): Promise<StreamRecord> {
  return new Promise((resolve) => {
    const record: StreamRecord = {
      videoId,
      user,
      status: 0,
      error: null,
      postedAt: performance.now(),
      headersAt: Number.NaN,
      endedAt: Number.NaN,
      events: [],
      final: null,
      words: null,
      markdownBytes: null,
    };
    let settled = false;
    const done = () => {
      if (settled) return;
      settled = true;
      record.endedAt = performance.now();
      resolve(record);
    };
    const headers = { Accept: 'text/event-stream', 'Content-Type': 'application/json', 'Content-Length': '2', 'X-API-Key': key };
    const req = request(
      { host: base.hostname, port: base.port, path: `/api/stenograms/${videoId}/generate`, method: 'POST', agent: false, headers },
      (response) => {
        record.status = response.statusCode ?? 0;
        record.headersAt = performance.now();
        response.setEncoding('utf8');
        if (record.status !== 200) {
          let body = '';
          response.on('data', (chunk: string) => (body += chunk));
          response.on('end', () => {
            record.error = `status ${record.status}: ${body.slice(0, 200)}`;
            done();
          });
          return;
        }
        const feed = createSseParser((frame) => {
          record.events.push({ id: frame.id, type: frame.event, at: performance.now(), bytes: frame.data.length });
          if (frame.event === 'stenogram:complete') {
            const payload = JSON.parse(frame.data) as { stenogram: { markdown: string }; metadata: { words: number | null } };
            record.final = frame.event;
            record.words = payload.metadata.words;
            record.markdownBytes = Buffer.byteLength(payload.stenogram.markdown);
          } else if (frame.event === 'stenogram:error') {
            record.final = frame.event;
            record.error = frame.data.slice(0, 300);
          }
        });
        response.on('data', feed);
        response.on('end', done);
        response.on('error', (error) => {
          record.error ??= `stream error: ${error.message}`;
          done();
        });
      },
    );
    req.setTimeout(STREAM_TIMEOUT_MS, () => req.destroy(new Error(`no data within ${STREAM_TIMEOUT_MS / 1000} s`)));
    req.on('error', (error) => {
      record.error ??= `request error: ${error.message}`;
      done();
    });
    req.end('{}');
  });
}

/**
 * What-if: one stream while another session of the cluster holds a transaction with an xid open for
 * HOLD_MS (here in the same database; a transaction in any database of the cluster does the same).
 */
export async function heldBackStream(sql: Sql, base: URL, video: Prepared['videos'][number], key: string) {
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  let opened = () => {};
  const isOpen = new Promise<void>((resolve) => (opened = resolve));
  const holding = sql.begin(async (tx) => {
    await tx`select pg_current_xact_id()`;
    opened();
    await released;
  });
  await isOpen;
  const heldAt = performance.now();
  const stream = generateStream(base, video.videoId, video.user, key);
  await sleep(HOLD_MS);
  release();
  await holding;
  const releasedAt = performance.now();
  const record = await stream;
  return { record, heldMs: releasedAt - heldAt, releasedAt };
}
