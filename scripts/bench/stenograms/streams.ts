import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiKey } from '../../../core/accounts/createApiKey.ts';
import { createUser } from '../../../core/accounts/createUser.ts';
import type { Sql } from '../../../core/db/database.ts';
import { renderVtt } from '../../../core/subtitles/renderVtt.ts';
import { storeTrack } from '../../../core/subtitles/store.ts';
import { refreshTranscript } from '../../../core/subtitles/transcript.ts';
import { updateTier } from '../../../core/tiers/updateTier.ts';
import { fakeChannelId, fakeVideoId } from '../../../test/kit/ids.ts';
import { mix32 } from '../../../test/kit/random.ts';
import { conversation } from '../lib/corpus.ts';
import { type BenchContext, sleep } from '../lib/harness.ts';
import { numberKnob } from '../lib/knobs.ts';
import { sourcelessApiEnv, startService } from '../lib/processes.ts';
import { createSseParser } from '../lib/sse-parse.ts';
import { distribution, round } from '../lib/stats.ts';
import { memoryOf, resetPeak } from '../lib/usage.ts';

export const STREAMS = {
  streams: numberKnob('STENOGRAMS_STREAMS', 50),
  /** One L3 key each; the streams are spread over them (one stenogram per user and video). */
  users: numberKnob('STENOGRAMS_USERS', 10),
  workerConcurrency: numberKnob('STENOGRAMS_WORKER_CONCURRENCY', 4),
  timeoutMs: 120_000,
};
const channelId = fakeChannelId('bench:stenograms');

/** Pro users with a key each and quota enough, a channel, and STREAMS + 1 videos with a stored transcript each. */
async function prepare(sql: Sql, minutes: number) {
  await updateTier(sql, 'pro', { features: { stenograms: true }, limits: { requestsPerMinute: null, apiStenogramsPerDay: 1_000 } });
  const keys: string[] = [];
  for (let i = 0; i < STREAMS.users; i++) {
    const user = await createUser(sql, { email: `stenograms-${i}@example.org`, tier: 'pro', isAdmin: false });
    keys.push((await createApiKey(sql, { userId: user.id, scope: 'L3' })).key);
  }
  await sql`insert into channels (channel_id, title) values (${channelId}, 'Bench stenograms')`;
  const videos: string[] = [];
  for (let i = 0; i <= STREAMS.streams; i++) {
    const videoId = fakeVideoId(`bench:stenograms:${minutes}:${i}`);
    const { cues } = conversation(minutes, mix32(1, 10_000 + minutes * 100 + i));
    // Stored as a fetch stores it: WebVTT with ">> " for a speaker change, parsed and normalised by storeTrack.
    const text = renderVtt(
      cues.map(({ start, end, text, speakerChange }) => ({
        startMs: Math.round(start * 1000),
        endMs: Math.round(end * 1000),
        text,
        speakerChange,
      })),
    );
    await sql.begin(async (tx) => {
      await tx`insert into videos (video_id, channel_id, title, language, status) values (${videoId}, ${channelId}, 'A conversation', 'en', 'live')`;
      await storeTrack(tx, { videoId, language: 'en', kind: 'manual', source: 'archive', text, formatHint: 'vtt' });
      await refreshTranscript(tx, videoId, { checked: true });
    });
    videos.push(videoId);
  }
  return { keys, videos };
}

interface StreamRecord {
  postedAt: number;
  /** Each frame's SSE id (the event's id), type and arrival. */
  events: Array<{ id: string | undefined; type: string; at: number }>;
  final: string | null;
  error: string | null;
}

/** POST …/generate and reads its event stream to the end; times are performance.now(). */
function generateStream(base: URL, videoId: string, key: string): Promise<StreamRecord> {
  const record: StreamRecord = { postedAt: performance.now(), events: [], final: null, error: null };
  return new Promise((resolve) => {
    const headers = { Accept: 'text/event-stream', 'Content-Type': 'application/json', 'X-API-Key': key };
    const path = `/api/stenograms/${videoId}/generate`;
    const req = request({ host: base.hostname, port: base.port, path, method: 'POST', agent: false, headers }, (response) => {
      response.setEncoding('utf8');
      if (response.statusCode !== 200) record.error = `status ${response.statusCode}`;
      const feed = createSseParser((frame) => {
        record.events.push({ id: frame.id, type: frame.event, at: performance.now() });
        if (frame.event === 'stenogram:complete' || frame.event === 'stenogram:error') record.final = frame.event;
        if (frame.event === 'stenogram:error') record.error = frame.data.slice(0, 300);
      });
      response.on('data', feed).on('end', () => resolve(record));
      response.on('error', (error) => resolve({ ...record, error: record.error ?? error.message }));
    });
    req.setTimeout(STREAMS.timeoutMs, () => req.destroy(new Error(`no data within ${STREAMS.timeoutMs / 1000} s`)));
    req.on('error', (error) => resolve({ ...record, error: record.error ?? error.message }));
    req.end('{}');
  });
}

/**
 * Commit → client of every delivered event. NOTIFY goes out when the inserting transaction commits, and
 * a stream's transactions commit one after another, so the k-th notification of a stream heard here is
 * its k-th transaction's commit; the events of one transaction share its created_at.
 */
async function fromCommit(sql: Sql, records: StreamRecord[], notified: Map<string, number[]>) {
  const rows = await sql<{ stream: string; id: string; createdAt: string }[]>`
    select stream, id::text, created_at::text as "createdAt" from events where stream like 'stenogram:%' order by stream, seq`;
  const commitAt = new Map<string, number>();
  for (const [stream, times] of notified) {
    const events = rows.filter((row) => row.stream === stream);
    const transactions = [...new Set(events.map((row) => row.createdAt))];
    if (times.length === transactions.length) for (const row of events) commitAt.set(row.id, times[transactions.indexOf(row.createdAt)]!);
  }
  const all: number[] = [];
  // Live: committed after the client had stenogram:started, so followed rather than caught up on.
  const live: number[] = [];
  for (const record of records) {
    const startedAt = record.events.find((event) => event.type === 'stenogram:started')?.at ?? Infinity;
    for (const event of record.events) {
      const commit = commitAt.get(event.id ?? '');
      if (commit === undefined) continue;
      all.push(event.at - commit);
      if (commit > startedAt) live.push(event.at - commit);
    }
  }
  return { all: distribution(all), live: distribution(live), unmatched: records.reduce((n, r) => n + r.events.length, 0) - all.length };
}

/**
 * STREAMS concurrent generate streams on one `afterimage api` while one `afterimage worker` (no LLM: the
 * offline generator, the file store in a temporary DATA_DIR) writes them, on a fresh database.
 */
export async function streamRound(ctx: BenchContext, minutes: number, problems: string[]) {
  const label = `${STREAMS.streams} × ${minutes} min`;
  const db = await ctx.database();
  const sql = db.pool({ max: 3, role: 'bench' });
  const { keys, videos } = await prepare(sql, minutes);
  const dataDir = await mkdtemp(join(tmpdir(), 'afterimage-bench-stenograms-'));
  const env = {
    ...sourcelessApiEnv(dataDir, db.url, 'stenograms'),
    WORKER_CONCURRENCY: String(STREAMS.workerConcurrency),
    STENOGRAM_STORE: 'file',
    LLM_BASE_URL: '',
    TYPESENSE_URL: '',
  };
  const notified = new Map<string, number[]>();
  const listener = await sql.listen('afterimage_events', (stream) => {
    if (stream.startsWith('stenogram:')) (notified.get(stream) ?? notified.set(stream, []).get(stream)!).push(performance.now());
  });
  const worker = await startService('worker', env);
  const api = await startService('api', env).catch(async (error: unknown) => {
    await worker.stop();
    throw error;
  });
  try {
    const base = new URL(api.url!);
    const keyOf = (i: number) => keys[i % keys.length]!;
    // One stream alone first: the route's first request out of the way.
    const first = await generateStream(base, videos[STREAMS.streams]!, keyOf(STREAMS.streams));
    if (first.final !== 'stenogram:complete') problems.push(`${label}: the first stream ended with ${first.final ?? first.error}`);
    resetPeak(api.pid);
    resetPeak(worker.pid);
    const started = performance.now();
    const records = await Promise.all(videos.slice(0, STREAMS.streams).map((videoId, i) => generateStream(base, videoId, keyOf(i))));
    const seconds = (performance.now() - started) / 1000;
    await sleep(100); // the last commit's NOTIFY may come after its client had the event
    const completed = records.filter((record) => record.final === 'stenogram:complete');
    if (completed.length < records.length) {
      const errors = records.flatMap((record) => (record.error ? [record.error] : [])).slice(0, 3);
      problems.push(`${label}: ${completed.length} of ${records.length} streams complete (${errors.join('; ')})`);
    }
    const result = {
      label,
      minutes,
      streams: records.length,
      completed: completed.length,
      seconds: round(seconds, 2),
      completeMs: distribution(
        completed.map((record) => record.events.at(-1)!.at - record.postedAt),
        0,
      ),
      fromCommitMs: await fromCommit(sql, records, notified),
      peakRssMiB: {
        api: round(memoryOf(api.pid)?.peakMiB ?? Number.NaN, 0),
        worker: round(memoryOf(worker.pid)?.peakMiB ?? Number.NaN, 0),
      },
    };
    ctx.progress(
      `${label}: ${result.completed} complete, the last after ${result.completeMs.max} ms; commit → client p99 ${result.fromCommitMs.all.p99} ms (live ${result.fromCommitMs.live.p99})`,
    );
    return result;
  } finally {
    await listener.unlisten();
    await api.stop();
    await worker.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}
