/**
 * Private stenograms, two parts:
 *   offline  the built-in generator (createOfflineStenogramGenerator, afterimage-stenogram-1) on
 *            generated 2-hour and 30-minute transcripts: ms per stenogram after a warm-up, words per
 *            second, and the peak RSS of a process doing only that (lib/stenograms-child.ts, one
 *            child process per transcript size);
 *   streams  STREAMS concurrent POST /api/stenograms/:videoId/generate on one API process
 *            (`afterimage api`, a child process: startApi with its event hub) while `afterimage worker`
 *            (another child, WORKER_CONCURRENCY=4, no LLM: the offline generator, the file store in a
 *            temporary DATA_DIR) writes them; each SSE response is read to stenogram:complete. One
 *            round with 30-minute transcripts, one with 2-hour ones, each on a fresh database; two
 *            streams one at a time before each burst (the route's first request, the idle reference),
 *            and after the first burst a what-if: one stream beside a transaction held open 2 s.
 *
 * Commit → client: this process LISTENs on the events' NOTIFY channel itself. NOTIFY goes out only
 * when the inserting transaction commits, once per stream, and a stream's transactions commit one
 * after another (stenogram:started in the request's, progress coalesced into a few writes,
 * stenogram:complete with the row's update), so the k-th notification of a stream is the commit of its
 * k-th transaction; the events of one transaction share its created_at. Delivery latency is the client's arrival time minus that notification's arrival here
 * (one clock, one process); arrival minus the row's created_at (now(): the transaction's start, on
 * the machine's wall clock) is given beside it as an upper bound.
 *
 * For exploring (the defaults are the benchmark): STENOGRAMS_STREAMS, STENOGRAMS_USERS,
 * STENOGRAMS_WORKER_CONCURRENCY, STENOGRAMS_ROUND_MINUTES (e.g. "30,120"), STENOGRAMS_PARTS (offline,streams), and
 * STENOGRAMS_API_NODE_ARGS / STENOGRAMS_WORKER_NODE_ARGS (node options for those processes, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"),
 * and STENOGRAMS_PG_ACTIVITY=1 (samples pg_stat_activity every 10 ms during the burst into the results: who waited on what).
 */
import { fork } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApiKey } from '../../core/accounts/createApiKey.ts';
import { createUser } from '../../core/accounts/createUser.ts';
import type { Sql } from '../../core/db/database.ts';
import { readTranscriptCues } from '../../core/llm/generation.ts';
import type { StenogramInput } from '../../core/stenograms/stenogram.ts';
import { renderVtt } from '../../core/subtitles/renderVtt.ts';
import { storeTrack } from '../../core/subtitles/store.ts';
import { refreshTranscript } from '../../core/subtitles/transcript.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { fakeChannelId, fakeVideoId } from '../../test/kit/ids.ts';
import { mix32 } from '../../test/kit/random.ts';
import { type Conversation, conversation } from './lib/corpus.ts';
import { type BenchContext, type BenchDatabase, type Benchmark, sleep, target } from './lib/harness.ts';
import { listKnob, nodeArgsKnob, numberKnob } from './lib/knobs.ts';
import { postmasterPid, type ServiceProcess, startService } from './lib/processes.ts';
import { distribution, type Distribution, median, percentile, round } from './lib/stats.ts';
import { cpuDelta, cpuOf, cpuSnapshot, memoryOf, memorySampler, resetPeak } from './lib/usage.ts';
import { createSseParser } from './lib/sse-parse.ts';
import type { StenogramsChildMessage, StenogramsOfflineReport, StenogramsOfflineRequest } from './lib/stenograms-child.ts';

const SEED = 1;
const PARTS = new Set(listKnob('STENOGRAMS_PARTS', 'offline,streams'));

// Offline generator
const INPUTS_PER_SIZE = 4;
interface SizeSpec {
  id: string;
  label: string;
  minutes: number;
  runs: number;
}
const SIZES: SizeSpec[] = [
  { id: '2h', label: '2 h', minutes: 120, runs: 60 },
  { id: '30min', label: '30 min', minutes: 30, runs: 200 },
];

// Concurrent streams
const STREAMS = numberKnob('STENOGRAMS_STREAMS', 50);
/** Streams are spread over this many users (one L3 key each): one stenogram per user and video. */
const USERS = numberKnob('STENOGRAMS_USERS', 10);
const WORKER_CONCURRENCY = numberKnob('STENOGRAMS_WORKER_CONCURRENCY', 4);
const ROUND_MINUTES = listKnob('STENOGRAMS_ROUND_MINUTES', '30,120')
  .map(Number)
  .filter((minutes) => minutes > 0);
const STENOGRAMS_PER_DAY = 1_000; // raised from the Pro tier's 10 per key, still charged
const STREAM_TIMEOUT_MS = 120_000;
/** The what-if of the first round: a transaction with an xid held open this long while one stream runs. */
const HOLD_MS = 2_000;
const CHANNEL_ID = fakeChannelId('bench:stenograms');

// ---------------------------------------------------------------------------------------------
// Transcripts

const inputOf = (videoId: string, minutes: number, generated: Conversation): StenogramInput => ({
  videoId,
  title: `A ${minutes}-minute conversation`,
  channelTitle: 'Bench stenograms',
  language: 'en',
  cues: generated.cues,
});

// ---------------------------------------------------------------------------------------------
// Part 1: the offline generator, in a child process per size

const childScript = fileURLToPath(new URL('./lib/stenograms-child.ts', import.meta.url));

/** Forks the child, sends it the request and waits for its report. */
function runChild(request: StenogramsOfflineRequest): Promise<StenogramsOfflineReport> {
  return new Promise((resolve, reject) => {
    const child = fork(childScript, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let settled = false;
    const settle = (action: () => void) => {
      if (settled) return;
      settled = true;
      action();
    };
    child.on('message', (message: StenogramsChildMessage) => {
      if (message.type === 'ready') child.send(request);
      else if (message.type === 'report') settle(() => resolve(message.report));
      else settle(() => reject(new Error(`the offline child failed: ${message.message}`)));
    });
    // Its last message may still be on its way.
    child.once('exit', (code, signal) =>
      setTimeout(() => settle(() => reject(new Error(`the offline child exited (${signal ?? code}) without a report`))), 1_000),
    );
  });
}

interface OfflineResult {
  size: string;
  label: string;
  minutes: number;
  inputs: Array<{ cues: number; words: number; turns: number; labels: number; directions: number; pauses: number }>;
  warmup: number;
  /** The warm-up stenograms, ms: the first is the process's first (nothing compiled yet). */
  warmupMs: number[];
  runs: number;
  wallMs: Distribution;
  cpuMs: Distribution;
  /** Words of the transcript per second of wall time, per run: median and the slowest run's. */
  wordsPerSecond: { median: number | null; p95Run: number | null };
  rssBeforeMiB: number | null;
  peakRssMiB: number | null;
  peakReset: boolean;
  outputs: StenogramsOfflineReport['outputs'];
  deterministic: boolean;
}

async function offlinePart(ctx: BenchContext, problems: string[]): Promise<OfflineResult[]> {
  const results: OfflineResult[] = [];
  for (const size of SIZES) {
    const made = Array.from({ length: INPUTS_PER_SIZE * 2 }, (_, index) =>
      conversation(size.minutes, mix32(SEED, size.minutes * 1_000 + index)),
    );
    const inputs = made.slice(0, INPUTS_PER_SIZE);
    const warmup = made.slice(INPUTS_PER_SIZE);
    const report = await runChild({
      warmup: warmup.map((generated, index) => inputOf(fakeVideoId(`warm:${size.id}:${index}`), size.minutes, generated)),
      inputs: inputs.map((generated, index) => inputOf(fakeVideoId(`input:${size.id}:${index}`), size.minutes, generated)),
      runs: size.runs,
    });
    const wordsPerSecond = report.wallMs.map((ms, run) => inputs[run % inputs.length]!.words / (ms / 1000));
    report.outputs.forEach((output, index) => {
      if (output.words !== inputs[index]!.words)
        problems.push(`offline ${size.label}: stenogram ${index} has ${output.words} words, the transcript ${inputs[index]!.words}`);
    });
    if (!report.deterministic) problems.push(`offline ${size.label}: the same transcript gave different stenograms`);
    const result: OfflineResult = {
      size: size.id,
      label: size.label,
      minutes: size.minutes,
      inputs: inputs.map(({ cues, ...counts }) => ({ cues: cues.length, ...counts })),
      warmup: warmup.length,
      warmupMs: report.warmupMs.map((ms) => round(ms, 1)!),
      runs: size.runs,
      wallMs: distribution(report.wallMs),
      cpuMs: distribution(report.cpuMs),
      wordsPerSecond: {
        median: round(median(wordsPerSecond), 0),
        p95Run: round(
          percentile(
            [...wordsPerSecond].sort((a, b) => a - b),
            5,
          ),
          0,
        ),
      },
      rssBeforeMiB: round(report.rssBeforeMiB, 1),
      peakRssMiB: round(report.peakRssMiB, 1),
      peakReset: report.peakReset,
      outputs: report.outputs,
      deterministic: report.deterministic,
    };
    results.push(result);
    ctx.progress(
      `offline ${size.label}: median ${result.wallMs.p50} ms, p95 ${result.wallMs.p95} ms, ${result.wordsPerSecond.median} words/s, peak RSS ${result.peakRssMiB} MiB`,
    );
  }
  return results;
}

// ---------------------------------------------------------------------------------------------
// Part 2: concurrent generate streams through the API and the worker

/** `videos` has STREAMS + 3: the burst's, then two generated one at a time before it (the route's first request, the idle reference), and the what-if's. */
interface Prepared {
  users: Array<{ id: string; key: string }>;
  videos: Array<{ videoId: string; user: number; words: number; cues: number }>;
  cues: number;
  setupMs: number;
}

/** The users (Pro, one L3 key each, limits raised), a channel, its videos and a stored transcript each. */
async function prepare(sql: Sql, minutes: number): Promise<Prepared> {
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

interface StreamRecord {
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
function generateStream(base: URL, videoId: string, user: number, key: string): Promise<StreamRecord> {
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

interface EventRow {
  stream: string;
  videoId: string;
  id: string;
  type: string;
  createdMs: number;
  bytes: number;
  stage: string | null;
  percent: number | null;
}
interface Notification {
  stream: string;
  at: number;
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const list = groups.get(key(item));
    if (list) list.push(item);
    else groups.set(key(item), [item]);
  }
  return groups;
}

/** The wall clock (ms since the epoch, fractional) of a performance.now() time: one offset, taken just before the burst. */
function wallClock(): (at: number) => number {
  const offsets: number[] = [];
  for (let i = 0; i < 200; i++) offsets.push(Date.now() - performance.now());
  // Date.now() has whole ms: the highest offset is the one taken just after a tick.
  const offset = Math.max(...offsets);
  return (at) => offset + at;
}

/** Markdown files in the file store (DATA_DIR/stenograms/<user>/<video>.md) and their bytes. */
async function storedFiles(root: string): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  for (const user of await readdir(root).catch(() => [] as string[])) {
    for (const name of await readdir(join(root, user)).catch(() => [] as string[])) {
      if (!name.endsWith('.md') || name.startsWith('.')) continue;
      files++;
      bytes += (await stat(join(root, user, name))).size;
    }
  }
  return { files, bytes };
}

/** Index scans of the events table by stream (readEvents, finalHead): every read of the API's hub. Counted once the API's sessions have ended and flushed their statistics. */
async function eventReads(sql: Sql): Promise<number> {
  const [row] = await sql<
    { scans: number }[]
  >`select coalesce(sum(idx_scan), 0)::float8 as scans from pg_stat_user_indexes where indexrelname = 'events_stream_seq'`;
  return row?.scans ?? Number.NaN;
}

/**
 * Per delivered event: arrival − its commit's NOTIFY here, and arrival − created_at; by event type, and
 * `live` for the events committed after their client had stenogram:started (the stream was following).
 */
function deliveryLatency(records: StreamRecord[], rows: EventRow[], notifications: Notification[], wall: (at: number) => number) {
  const notified = groupBy(notifications, (note) => note.stream);
  // The k-th notification of a stream is the commit of its k-th transaction (one after another); the
  // events of one transaction share its start time (created_at), and a stream's transactions follow its numbering.
  const commitAt = new Map<string, number>();
  let mismatchedStreams = 0;
  for (const [stream, events] of groupBy(rows, (row) => row.stream)) {
    const times = notified.get(stream) ?? [];
    const transactions = [...groupBy(events, (event) => String(event.createdMs)).values()];
    if (times.length !== transactions.length) mismatchedStreams++;
    else transactions.forEach((batch, index) => batch.forEach((event) => commitAt.set(event.id, times[index]!.at)));
  }
  const rowById = new Map(rows.map((row) => [row.id, row]));
  const fromCommit: Record<string, number[]> = { all: [], live: [] };
  const fromTxStart: Record<string, number[]> = { all: [], live: [] };
  let unmatched = 0;
  for (const record of records) {
    const startedAt = record.events.find((event) => event.type === 'stenogram:started')?.at ?? Number.POSITIVE_INFINITY;
    for (const event of record.events) {
      const row = event.id === undefined ? undefined : rowById.get(event.id);
      if (!row) {
        unmatched++;
        continue;
      }
      const commit = commitAt.get(event.id!);
      const kinds = ['all', event.type, ...(commit !== undefined && commit > startedAt ? ['live'] : [])];
      for (const kind of kinds) {
        if (commit !== undefined) (fromCommit[kind] ??= []).push(event.at - commit);
        (fromTxStart[kind] ??= []).push(wall(event.at) - row.createdMs);
      }
    }
  }
  const summaries = (values: Record<string, number[]>) =>
    Object.fromEntries(Object.entries(values).map(([type, list]) => [type, distribution(list)]));
  return {
    fromCommitMs: summaries(fromCommit),
    fromTxStartMs: summaries(fromTxStart),
    notifications: notifications.length,
    events: rows.length,
    mismatchedStreams,
    unmatchedDeliveries: unmatched,
  };
}

/** From the events table (the database's clock): stenogram:started → first progress (queued, transcript read) → stenogram:complete (generated, stored). */
function phases(rows: EventRow[]) {
  const queued: number[] = [];
  const working: number[] = [];
  for (const events of groupBy(rows, (row) => row.stream).values()) {
    const started = events.find((event) => event.type === 'stenogram:started');
    const first = events.find((event) => event.type === 'stenogram:progress');
    const complete = events.find((event) => event.type === 'stenogram:complete');
    if (started && first) queued.push(first.createdMs - started.createdMs);
    if (first && complete) working.push(complete.createdMs - first.createdMs);
  }
  return { queuedMs: distribution(queued, 0), inWorkerMs: distribution(working, 0) };
}

/** One stream's events: `type (stage percent) +ms` from the first event's created_at. */
function timeline(rows: EventRow[]): string[] {
  const start = rows[0]?.createdMs ?? 0;
  return rows.map(
    (row) =>
      `${row.type.replace('stenogram:', '')}${row.stage ? ` ${row.stage} ${row.percent}` : ''} +${Math.round(row.createdMs - start)}`,
  );
}

/** When a stream's first and last progress events and its stenogram:complete were committed, ms after its first event. */
function spread(rows: EventRow[]) {
  const start = rows[0]?.createdMs ?? Number.NaN;
  const progress = rows.filter((row) => row.type === 'stenogram:progress');
  const at = (row: EventRow | undefined) => (row ? row.createdMs - start : Number.NaN);
  return {
    firstProgressMs: at(progress[0]),
    lastProgressMs: at(progress[progress.length - 1]),
    completeMs: at(rows.find((row) => row.type === 'stenogram:complete')),
  };
}

/** The progress events of a stream as `stage percent`, and how many streams' percentages ever went down. */
function progressSequence(rows: EventRow[]) {
  const streams = [
    ...groupBy(
      rows.filter((row) => row.type === 'stenogram:progress'),
      (row) => row.stream,
    ).values(),
  ];
  const goesBack = streams.filter((events) =>
    events.some((event, index) => index > 0 && (event.percent ?? 0) < (events[index - 1]!.percent ?? 0)),
  ).length;
  return { first: streams[0]?.map((event) => `${event.stage} ${event.percent}`) ?? [], streams: streams.length, goesBack };
}

/**
 * CPU µs so far of each PostgreSQL backend serving `database` (a child of the postmaster whose process
 * title names it), by pid: the share of the server's CPU that is this round's, apart from other
 * databases of a shared cluster and the server's background processes.
 */
function databaseBackendTimes(postmaster: number | undefined, database: string): Map<number, number> {
  const times = new Map<number, number>();
  if (postmaster === undefined) return times;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) !== postmaster) continue;
      const title = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (!title.includes(` ${database} `)) continue;
      times.set(Number(entry), (Number(fields[11]) + Number(fields[12])) * 10_000); // USER_HZ is 100
    } catch {
      // the process ended meanwhile
    }
  }
  return times;
}

/** µs used between two databaseBackendTimes; a backend started in between counts from zero. */
function backendDelta(start: Map<number, number>, end: Map<number, number>): number {
  let us = 0;
  for (const [pid, time] of end) us += Math.max(0, time - (start.get(pid) ?? 0));
  return us;
}

/** Opt-in (STENOGRAMS_PG_ACTIVITY=1): what the database's sessions were doing, sampled every 10 ms, by process, state, wait and statement. */
function activitySampler(sql: Sql | undefined) {
  const counts = new Map<string, number>();
  let sampling = sql !== undefined;
  let samples = 0;
  const loop = (async () => {
    while (sampling && sql) {
      const rows = await sql<{ key: string }[]>`
        select coalesce(nullif(split_part(application_name, ':', 3), ''), 'graphile-worker') || ' | ' || state || ' | ' || coalesce(wait_event_type || '/' || wait_event, 'on CPU') || ' | ' || left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 70) as key
        from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and state <> 'idle'`;
      samples++;
      for (const row of rows) counts.set(row.key, (counts.get(row.key) ?? 0) + 1);
      await sleep(10);
    }
  })();
  return {
    async stop() {
      sampling = false;
      await loop;
      return {
        samples,
        top: [...counts]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 25)
          .map(([key, n]) => ({ key, samples: n })),
      };
    },
  };
}

/** The environment of `afterimage api` and `afterimage worker`: the round's database, a temporary DATA_DIR, no LLM, no other services. */
const serviceEnv = (dbUrl: string, dataDir: string) => ({
  DATABASE_URL: dbUrl,
  DATA_DIR: dataDir,
  PORT: '0',
  HOST: '127.0.0.1',
  WORKER_CONCURRENCY: String(WORKER_CONCURRENCY),
  STENOGRAM_STORE: 'file',
  LLM_BASE_URL: '',
  TYPESENSE_URL: '',
  YOUTUBE_API_KEY: '',
  WAYBACK_ENABLED: 'false',
});

async function startApiProcess(ctx: BenchContext, env: Record<string, string>): Promise<ServiceProcess & { base: URL }> {
  const api = await startService('api', env, { nodeArgs: nodeArgsKnob('STENOGRAMS_API_NODE_ARGS') });
  if (!api.url) {
    await api.stop();
    throw new Error('the API logged no url');
  }
  ctx.progress(`API pid ${api.pid} at ${api.url}, ready in ${Math.round(api.readyAt - api.spawnedAt)} ms`);
  return Object.assign(api, { base: new URL(api.url) });
}

/**
 * Samples, every 50 ms, the write transactions (those with an xid) open in other databases of the same
 * PostgreSQL cluster: xids are the cluster's, so such a transaction holds back readEvents' visibility
 * horizon (pg_snapshot_xmin) in this database too. A disturbance gauge for the shared benchmark cluster.
 */
function clusterWriters(sql: Sql) {
  let sampling = true;
  let samples = 0;
  let withWriter = 0;
  let oldestMs = 0;
  const loop = (async () => {
    while (sampling) {
      const [row] = await sql<{ writers: number; oldestMs: number | null }[]>`
        select count(*)::int as writers, (extract(epoch from max(clock_timestamp() - xact_start)) * 1000)::float8 as "oldestMs"
        from pg_stat_activity where backend_xid is not null and datname is distinct from current_database()`;
      samples++;
      if ((row?.writers ?? 0) > 0) withWriter++;
      oldestMs = Math.max(oldestMs, row?.oldestMs ?? 0);
      await sleep(50);
    }
  })();
  return {
    async stop() {
      sampling = false;
      await loop;
      return { samples, withWriter, share: round(withWriter / Math.max(1, samples), 2), oldestMs: round(oldestMs, 0) };
    },
  };
}

/**
 * What-if: one stream while another session of the cluster holds a transaction with an xid open for
 * HOLD_MS (here in the same database; a transaction in any database of the cluster does the same).
 */
async function heldBackStream(sql: Sql, base: URL, video: Prepared['videos'][number], key: string) {
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

/** What one round measured, before it becomes the result. */
interface Measured {
  label: string;
  minutes: number;
  prepared: Prepared;
  alone: StreamRecord;
  records: StreamRecord[];
  seconds: number;
  notifications: Notification[];
  wall: (at: number) => number;
  memory: {
    peakReset: boolean;
    idle: { api: number; worker: number };
    peak: { api: number; worker: number };
    end: { api: number; worker: number };
    sampled: { api: number; worker: number };
  };
  cpu: { apiUs: number | null; workerUs: number | null; delta: ReturnType<typeof cpuDelta>; databaseUs: number | null };
  /** Index scans of events_stream_seq by the API: the first stream, the one alone and the burst. */
  eventReads: number;
  cluster: Awaited<ReturnType<ReturnType<typeof clusterWriters>['stop']>>;
  held: (Awaited<ReturnType<typeof heldBackStream>> & { eventReads: number }) | null;
  warnings: { api: string[]; worker: string[] };
  activity: Awaited<ReturnType<ReturnType<typeof activitySampler>['stop']>> | null;
}

/** The burst itself: STREAMS POSTs at once, with the processes' CPU and memory around it. */
async function burst(
  db: BenchDatabase,
  base: URL,
  prepared: Prepared,
  pids: { api: number; worker: number },
  postmaster: number | undefined,
  sql: Sql,
) {
  const samplers = { api: memorySampler(pids.api, 100), worker: memorySampler(pids.worker, 100) };
  try {
    const peakReset = resetPeak(pids.api) && resetPeak(pids.worker);
    const since = performance.now();
    const wall = wallClock();
    const activity = activitySampler(process.env.STENOGRAMS_PG_ACTIVITY === '1' ? db.pool({ max: 1, role: 'bench-activity' }) : undefined);
    const cluster = clusterWriters(sql);
    const cpuStart = {
      api: cpuOf(pids.api),
      worker: cpuOf(pids.worker),
      machine: cpuSnapshot(postmaster),
      backends: databaseBackendTimes(postmaster, db.name),
    };
    const started = performance.now();
    const records = await Promise.all(
      prepared.videos.slice(0, STREAMS).map((video) => generateStream(base, video.videoId, video.user, prepared.users[video.user]!.key)),
    );
    const seconds = (performance.now() - started) / 1000;
    const cpuEnd = {
      api: cpuOf(pids.api),
      worker: cpuOf(pids.worker),
      machine: cpuSnapshot(postmaster),
      backends: databaseBackendTimes(postmaster, db.name),
    };
    const sampledActivity = process.env.STENOGRAMS_PG_ACTIVITY === '1' ? await activity.stop() : null;
    const writers = await cluster.stop();
    samplers.api.stop();
    samplers.worker.stop();
    const end = { api: memoryOf(pids.api)!, worker: memoryOf(pids.worker)! };
    return {
      records,
      seconds,
      wall,
      cluster: writers,
      activity: sampledActivity,
      memory: {
        peakReset,
        peak: { api: end.api.peakMiB, worker: end.worker.peakMiB },
        end: { api: end.api.rssMiB, worker: end.worker.rssMiB },
        sampled: { api: samplers.api.maxSince(since), worker: samplers.worker.maxSince(since) },
      },
      cpu: {
        apiUs: cpuStart.api === undefined || cpuEnd.api === undefined ? null : cpuEnd.api - cpuStart.api,
        workerUs: cpuStart.worker === undefined || cpuEnd.worker === undefined ? null : cpuEnd.worker - cpuStart.worker,
        delta: cpuDelta(cpuStart.machine, cpuEnd.machine),
        databaseUs: postmaster === undefined ? null : backendDelta(cpuStart.backends, cpuEnd.backends),
      },
    };
  } finally {
    samplers.api.stop();
    samplers.worker.stop();
  }
}

async function streamRound(ctx: BenchContext, minutes: number, problems: string[], withHold: boolean) {
  const label = `${STREAMS} × ${minutes} min`;
  const db = await ctx.database();
  const sql = db.pool({ max: 3, role: 'bench' });
  const prepared = await prepare(sql, minutes);
  ctx.progress(
    `${label}: ${prepared.videos.length} videos with a stored transcript (${prepared.cues} cues, ${prepared.videos.reduce((sum, video) => sum + video.words, 0)} words), ${USERS} users, in ${Math.round(prepared.setupMs)} ms`,
  );
  const dataDir = await mkdtemp(join(tmpdir(), 'afterimage-bench-stenograms-'));
  const env = serviceEnv(db.url, dataDir);
  const postmaster = await postmasterPid(sql);
  const notifications: Notification[] = [];
  const listener = await sql.listen('afterimage_events', (stream) => {
    if (stream.startsWith('stenogram:')) notifications.push({ stream, at: performance.now() });
  });
  let api: (ServiceProcess & { base: URL }) | undefined;
  const worker = await startService('worker', env, { nodeArgs: nodeArgsKnob('STENOGRAMS_WORKER_NODE_ARGS') });
  try {
    ctx.progress(`worker pid ${worker.pid}, ready in ${Math.round(worker.readyAt - worker.spawnedAt)} ms`);
    api = await startApiProcess(ctx, env);
    const readsBefore = await eventReads(sql);
    const idle = { api: memoryOf(api.pid)!.rssMiB, worker: memoryOf(worker.pid)!.rssMiB };
    // One stream at a time first: the route's first request out of the way, then the idle reference.
    const one = (video: Prepared['videos'][number]) =>
      generateStream(api!.base, video.videoId, video.user, prepared.users[video.user]!.key);
    const first = await one(prepared.videos[STREAMS]!);
    if (first.final !== 'stenogram:complete') problems.push(`${label}: the first stream ended with ${first.final ?? first.error}`);
    const alone = await one(prepared.videos[STREAMS + 1]!);
    await sleep(300);
    const measured = await burst(db, api.base, prepared, { api: api.pid, worker: worker.pid }, postmaster, sql);
    await sleep(100); // slack for the last NOTIFY (the last commit's came before its client had the event)
    const warnings = { api: api.warnings.map((entry) => String(entry.msg)).slice(0, 10), worker: [] as string[] };
    // Stopped before counting: a session's statistics are flushed when it ends.
    await api.stop();
    const reads = (await eventReads(sql)) - readsBefore;
    let held: Measured['held'] = null;
    if (withHold) {
      api = await startApiProcess(ctx, env);
      const video = prepared.videos[STREAMS + 2]!;
      const heldRun = await heldBackStream(sql, api.base, video, prepared.users[video.user]!.key);
      await api.stop();
      held = { ...heldRun, eventReads: (await eventReads(sql)) - readsBefore - reads };
    }
    await listener.unlisten();
    await worker.stop();
    warnings.worker = worker.warnings.map((entry) => String(entry.msg)).slice(0, 10);
    const result = await analyse(
      sql,
      join(dataDir, 'stenograms'),
      {
        label,
        minutes,
        prepared,
        alone,
        notifications,
        eventReads: reads,
        held,
        warnings,
        ...measured,
        memory: { ...measured.memory, idle },
      },
      problems,
    );
    ctx.progress(
      `${label}: ${result.completed}/${STREAMS} complete in ${result.totalSeconds} s (per stream p50 ${result.perStreamMs.complete.p50} ms, p99 ${result.perStreamMs.complete.p99} ms); ` +
        `commit → client p99 ${result.delivery.fromCommitMs.all?.p99} ms; API peak ${result.memoryMiB.api.peak} MiB, worker peak ${result.memoryMiB.worker.peak} MiB`,
    );
    return result;
  } finally {
    await listener.unlisten().catch(() => undefined);
    await api?.stop();
    await worker.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** Reads what the round left in the database and the store, checks it, and makes the round's result. */
async function analyse(sql: Sql, storeRoot: string, m: Measured, problems: string[]) {
  const rows = await sql<EventRow[]>`
    select e.stream, g.video_id as "videoId", e.id::text as id, e.type, (extract(epoch from e.created_at) * 1000)::float8 as "createdMs",
      octet_length(e.payload::text) as bytes, e.payload->>'stage' as stage, (e.payload->>'percent')::int as percent
    from events e join stenograms g on e.stream = 'stenogram:' || g.id::text
    order by e.stream, e.seq`;
  const statuses = await sql<
    { status: string; n: number }[]
  >`select status, count(*)::int as n from stenograms group by status order by status`;
  const [jobs] = await sql<{ left: number }[]>`
    select count(*)::int as left from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id where t.identifier = 'generate_stenogram'`;
  const files = await storedFiles(storeRoot);
  // What a job reads before it generates (readTranscriptCues), timed here with the processes stopped: one at a time, idle.
  const readMs: number[] = [];
  for (const video of m.prepared.videos.slice(0, 7)) {
    const started = performance.now();
    await readTranscriptCues(sql, video.videoId);
    readMs.push(performance.now() - started);
  }
  const total = m.records.length + (m.held ? 3 : 2);
  const burstVideos = new Set(m.records.map((record) => record.videoId));
  const burstRows = rows.filter((row) => burstVideos.has(row.videoId));
  const completed = m.records.filter((record) => record.final === 'stenogram:complete');
  const expectedWords = new Map(m.prepared.videos.map((video) => [video.videoId, video.words]));
  const wrongWords = [...completed, m.alone].filter(
    (record) => record.final === 'stenogram:complete' && record.words !== expectedWords.get(record.videoId),
  );
  const generated = statuses.find((row) => row.status === 'generated')?.n ?? 0;
  if (completed.length !== STREAMS)
    problems.push(
      `${m.label}: ${completed.length} of ${STREAMS} streams got stenogram:complete (${m.records
        .filter((record) => record.error)
        .slice(0, 3)
        .map((record) => record.error)
        .join('; ')})`,
    );
  if (m.alone.final !== 'stenogram:complete')
    problems.push(`${m.label}: the stream alone before the burst ended with ${m.alone.final ?? m.alone.error}`);
  if (wrongWords.length)
    problems.push(
      `${m.label}: ${wrongWords.length} stenograms do not have their transcript's word count (e.g. ${wrongWords[0]!.words} for ${expectedWords.get(wrongWords[0]!.videoId)})`,
    );
  if (generated !== total || files.files !== total)
    problems.push(`${m.label}: ${generated} rows generated and ${files.files} files in the store for ${total} generations`);
  const delivery = deliveryLatency(m.records, burstRows, m.notifications, m.wall);
  const aloneDelivery = deliveryLatency(
    [m.alone],
    rows.filter((row) => row.videoId === m.alone.videoId),
    m.notifications,
    m.wall,
  );
  const heldVideo = m.held?.record.videoId;
  const heldStream = rows.find((row) => row.videoId === heldVideo)?.stream;
  const heldDelivery = m.held
    ? deliveryLatency(
        [m.held.record],
        rows.filter((row) => row.videoId === heldVideo),
        m.notifications,
        m.wall,
      )
    : null;
  if (m.held && m.held.record.final !== 'stenogram:complete')
    problems.push(`${m.label}: the stream beside a held transaction ended with ${m.held.record.final ?? m.held.record.error}`);
  const notificationsBeforeHold = m.notifications.filter((note) => note.stream !== heldStream).length;
  if (delivery.mismatchedStreams)
    problems.push(
      `${m.label}: ${delivery.mismatchedStreams} streams had a different number of NOTIFYs than events, so their commit times are unknown`,
    );
  const { delta } = m.cpu;
  const cores = (us: number | null) => (us === null ? null : round(us / 1e6 / m.seconds, 2));
  const ours = (m.cpu.apiUs ?? 0) + (m.cpu.workerUs ?? 0) + (delta.postgresUs ?? 0) + delta.selfUs;
  const toComplete = (record: StreamRecord) =>
    record.final === 'stenogram:complete' ? record.events[record.events.length - 1]!.at - record.postedAt : Number.NaN;
  const toStarted = (record: StreamRecord) =>
    (record.events.find((event) => event.type === 'stenogram:started')?.at ?? Number.NaN) - record.postedAt;
  return {
    label: m.label,
    minutes: m.minutes,
    streams: STREAMS,
    users: USERS,
    transcript: {
      cuesPerVideo: round(m.prepared.cues / m.prepared.videos.length, 0),
      wordsPerVideo: round(m.prepared.videos.reduce((sum, video) => sum + video.words, 0) / m.prepared.videos.length, 0),
    },
    completed: completed.length,
    failed: m.records.filter((record) => record.final === 'stenogram:error').length,
    errors: m.records.flatMap((record) => (record.error ? [record.error] : [])).slice(0, 5),
    totalSeconds: round(m.seconds, 2)!,
    perStreamMs: {
      headers: distribution(
        m.records.map((record) => record.headersAt - record.postedAt),
        0,
      ),
      started: distribution(m.records.map(toStarted), 0),
      complete: distribution(m.records.map(toComplete), 0),
    },
    phases: phases(burstRows),
    delivery,
    /** The stream generated alone just before the burst (the same API and worker, idle, the route warmed by one request). */
    alone: {
      headersMs: round(m.alone.headersAt - m.alone.postedAt, 1),
      startedMs: round(toStarted(m.alone), 1),
      completeMs: round(toComplete(m.alone), 1),
      phases: phases(rows.filter((row) => row.videoId === m.alone.videoId)),
      /** Its events as committed: type (stage percent) and ms after stenogram:started's created_at. */
      timeline: timeline(rows.filter((row) => row.videoId === m.alone.videoId)),
      spread: spread(rows.filter((row) => row.videoId === m.alone.videoId)),
      fromCommitMs: aloneDelivery.fromCommitMs,
    },
    /** readTranscriptCues of one video on the idle database, median of the last 5 of 7 (the first two warm the statement). */
    transcriptReadMs: round(median(readMs.slice(2)), 1),
    eventsPerStream: round(burstRows.length / STREAMS, 1),
    progress: progressSequence(rows),
    completeEventKiB: round(median(burstRows.filter((row) => row.type === 'stenogram:complete').map((row) => row.bytes)) / 1024, 1),
    /** Reads of the events table by the API during the whole round (the lone stream too), against the notifications it had. */
    eventReads: {
      reads: m.eventReads,
      notifications: notificationsBeforeHold,
      perNotification: round(m.eventReads / notificationsBeforeHold, 1),
    },
    /** Write transactions open in other databases of the cluster during the burst (sampled every 50 ms). */
    clusterWriters: m.cluster,
    /** What-if: one stream while a transaction with an xid was held open for HOLD_MS. */
    held:
      m.held && heldDelivery
        ? {
            heldMs: round(m.held.heldMs, 0),
            completeMs: round(
              m.held.record.events.length ? m.held.record.events[m.held.record.events.length - 1]!.at - m.held.record.postedAt : Number.NaN,
              0,
            ),
            /** Events that reached the client only after the held transaction ended. */
            arrivedAfterRelease: m.held.record.events.filter((event) => event.at >= m.held!.releasedAt).length,
            events: m.held.record.events.length,
            fromCommitMs: heldDelivery.fromCommitMs.all,
            eventReads: m.held.eventReads,
            notifications: m.notifications.length - notificationsBeforeHold,
          }
        : null,
    rows: statuses,
    store: { files: files.files, bytes: files.bytes },
    jobsLeft: jobs?.left ?? null,
    memoryMiB: {
      peakReset: m.memory.peakReset,
      api: {
        idle: round(m.memory.idle.api, 1),
        maxSampled: round(m.memory.sampled.api, 1),
        peak: round(m.memory.peak.api, 1),
        end: round(m.memory.end.api, 1),
      },
      worker: {
        idle: round(m.memory.idle.worker, 1),
        maxSampled: round(m.memory.sampled.worker, 1),
        peak: round(m.memory.peak.worker, 1),
        end: round(m.memory.end.worker, 1),
      },
    },
    cpuCores: {
      seconds: round(m.seconds, 2),
      api: cores(m.cpu.apiUs),
      worker: cores(m.cpu.workerUs),
      postgres: cores(delta.postgresUs),
      /** Of those, the backends serving this round's database. */
      postgresThisDatabase: cores(m.cpu.databaseUs),
      harness: cores(delta.selfUs),
      machine: cores(delta.machineBusyUs),
      /** Cores busy with other processes of the machine (not API, worker, PostgreSQL or this one): a disturbance gauge. */
      other: delta.machineBusyUs === null ? null : cores(Math.max(0, delta.machineBusyUs - ours)),
    },
    warnings: m.warnings,
    pgActivity: m.activity,
  };
}

type RoundResult = Awaited<ReturnType<typeof streamRound>>;

export const benchmark: Benchmark = {
  name: 'stenograms',
  title: 'Private stenograms: the offline generator, and concurrent generate streams',
  description:
    'Offline: createOfflineStenogramGenerator() on generated 2-hour (≈ 18,000 words, ≈ 3,600 cues) and 30-minute transcripts with `>>` speaker changes, NAME: labels and stage directions, in a child process of its own: ms per stenogram after a warm-up (median, p95), words/s, peak RSS. ' +
    `Streams: ${STREAMS} concurrent POST /api/stenograms/:videoId/generate to one \`afterimage api\` while one \`afterimage worker\` (WORKER_CONCURRENCY=${WORKER_CONCURRENCY}, offline generator, file store in a temporary DATA_DIR) writes them, on a fresh database per round (${ROUND_MINUTES.join(' and ')}-minute transcripts); ` +
    "each SSE response is read to stenogram:complete. Reported: how many complete (all must), total time, time to complete per stream, delivery latency from each event's commit to its client, API and worker peak RSS; " +
    `and a what-if: one stream while another session holds a transaction open ${HOLD_MS / 1000} s.`,
  async run(ctx) {
    const problems: string[] = [];
    const offline = PARTS.has('offline') ? await offlinePart(ctx, problems) : [];
    const rounds: RoundResult[] = [];
    if (PARTS.has('streams'))
      for (const [index, minutes] of ROUND_MINUTES.entries()) rounds.push(await streamRound(ctx, minutes, problems, index === 0));
    return {
      parameters: {
        seed: SEED,
        offline: {
          sizes: SIZES,
          inputsPerSize: INPUTS_PER_SIZE,
          warmupPerSize: INPUTS_PER_SIZE,
          process: 'lib/stenograms-child.ts (fork), one per size',
        },
        streams: {
          streams: STREAMS,
          users: USERS,
          roundMinutes: ROUND_MINUTES,
          workerConcurrency: WORKER_CONCURRENCY,
          api: '`node scripts/bin.mjs api` (child process), LOG_LEVEL=info, DATABASE_POOL_SIZE=10',
          worker:
            '`node scripts/bin.mjs worker` (child process), no LLM_BASE_URL (afterimage-stenogram-1), STENOGRAM_STORE=file in a temporary DATA_DIR',
          tier: { name: 'pro', apiStenogramsPerDay: STENOGRAMS_PER_DAY, requestsPerMinute: null },
          streamTimeoutMs: STREAM_TIMEOUT_MS,
          whatIf: `first round only: one stream while a transaction with an xid is held open ${HOLD_MS} ms (fresh API process)`,
        },
      },
      results: { offline, rounds },
      targets: rounds.map((round) => target(`${round.label}: streams complete`, round.completed, { atLeast: round.streams })),
      ok: problems.length === 0,
      problems,
    };
  },
};
