/**
 * 1,000 concurrent search streams on one API process: how long an event takes from its commit to
 * every client, and what the API process's memory does meanwhile.
 *
 * The API is `node scripts/bin.mjs api` in a child process (its own RSS, its open-files limit raised);
 * the clients are another child process (lib/sse-fanout-client.ts). No worker runs: the crawl's job
 * stays queued, and this process is the only writer of the crawl's event stream. It commits events
 * with appendEvents at a steady rate, each stamped with the wall-clock time just before its commit;
 * every client records its arrival time, so latency is measured on one clock.
 *
 * Sessions: SESSIONS users each open one search session of the same channel (they all join one
 * crawl, so the API's hub has one shared feed), and CLIENTS_PER_SESSION clients follow each session.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApiKey } from '../../core/accounts/createApiKey.ts';
import { createUser } from '../../core/accounts/createUser.ts';
import type { Sql } from '../../core/db/database.ts';
import { appendEvents, crawlStream } from '../../core/events/events.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { cpuDelta, cpuSnapshot, postmasterOf } from './lib/cpu.ts';
import { round, sleep, type BenchContext, type Benchmark, type Cell } from './lib/harness.ts';
import { cpuOf, memoryOf, memorySampler, startService } from './lib/proc.ts';
import type { ClientMessage, FanoutReport, LatencySummary, ParentMessage } from './lib/sse-fanout-client.ts';

/** The shape of the load; the environment variables are for exploring (e.g. after a fix), the defaults are the benchmark. */
const knob = (name: string, fallback: number) => {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
};
const SESSIONS = knob('SSE_FANOUT_SESSIONS', 10);
const CLIENTS_PER_SESSION = knob('SSE_FANOUT_CLIENTS_PER_SESSION', 100);
const CLIENTS = SESSIONS * CLIENTS_PER_SESSION;
const COMMITS_PER_SECOND = knob('SSE_FANOUT_COMMITS_PER_SECOND', 20);
const SECONDS = knob('SSE_FANOUT_SECONDS', 20);
const COMMITS = COMMITS_PER_SECOND * SECONDS;
/** Events per commit: 1 to 10 (one search:progress, then search:video), 5.5 on average. */
const eventsInCommit = (seq: number) => 1 + ((seq * 7) % 10);
const TARGET_P99_MS = 100;
const TARGET_RSS_MIB = 250;
const OPEN_FILES = 8_192;
const CONNECT_TIMEOUT_MS = 60_000;
const FINISH_TIMEOUT_MS = 20_000;
const CHANNEL_ID = 'UCbenchFanout1000clients'; // UC + 22

const clientScript = fileURLToPath(new URL('./lib/sse-fanout-client.ts', import.meta.url));

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

interface ClientsHandle {
  child: ChildProcess;
  next(type: ClientMessage['type']): Promise<ClientMessage>;
  send(message: ParentMessage): void;
}

/** The clients' process, its open-files limit raised through bash (which then execs node, keeping the IPC channel). */
function startClients(): ClientsHandle {
  const child = spawn(
    'bash',
    ['-c', `if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt ${OPEN_FILES} ]; then ulimit -n ${OPEN_FILES} || exit 97; fi; exec "$0" "$@"`, process.execPath, '--import', 'tsx', clientScript],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  const waiting = new Map<string, (message: ClientMessage) => void>();
  const failures: Array<(error: Error) => void> = [];
  const fail = (error: Error) => {
    for (const reject of failures.splice(0)) reject(error);
  };
  child.on('message', (message: ClientMessage) => {
    if (message.type === 'failed') return fail(new Error(`the stream clients failed: ${message.message}`));
    waiting.get(message.type)?.(message);
    waiting.delete(message.type);
  });
  child.once('exit', (code, signal) => setTimeout(() => fail(new Error(`the stream clients exited (${signal ?? code})`)), 1_000));
  return {
    child,
    next: (type) =>
      new Promise((resolve, reject) => {
        waiting.set(type, resolve);
        failures.push(reject);
      }),
    send: (message) => child.send(message),
  };
}

async function postmasterPid(sql: Sql): Promise<number | undefined> {
  const [backend] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
  return postmasterOf(backend!.pid);
}

interface Commit { seq: number; events: number; scheduledAt: number; sentAt: number; ackAt: number; commitMs: number; lateMs: number }

/** COMMITS transactions at COMMITS_PER_SECOND on a fixed schedule, each appending 1–10 events to the crawl's stream. */
async function publish(sql: Sql, stream: string): Promise<Commit[]> {
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
    const events: Array<{ type: string; payload: unknown }> = [
      { type: 'search:progress', payload: { stage: 'youtube_api', percent: Math.floor((seq / COMMITS) * 100), videosInBatch: n - 1, seq, idx: 0, sentAt } },
    ];
    for (let idx = 1; idx < n; idx++) events.push({ type: 'search:video', payload: { ...videoPayload(seq, idx), seq, idx, sentAt } });
    await sql.begin((tx) => appendEvents(tx, stream, events));
    const acked = performance.now();
    commits.push({ seq, events: n, scheduledAt, sentAt, ackAt: performance.timeOrigin + acked, commitMs: acked - began, lateMs: began - scheduledAt });
  }
  return commits;
}

const ms = (value: number | undefined) => (value === undefined ? null : round(value, 1));

async function run(ctx: BenchContext) {
  const problems: string[] = [];
  const db = await ctx.database();
  const sql = db.pool({ max: 2, role: 'bench' });
  const publisher = db.pool({ max: 1, role: 'bench-publisher' });
  await updateTier(sql, 'pro', { limits: { requestsPerMinute: null, channelSearchesPerHour: null } });
  await sql`insert into channels (channel_id, title) values (${CHANNEL_ID}, 'Bench fan-out channel')`;
  const users: Array<{ key: string }> = [];
  for (let i = 0; i < SESSIONS; i++) {
    const user = await createUser(sql, { email: `fanout-${i}@example.org`, tier: 'pro', isAdmin: false });
    users.push({ key: (await createApiKey(sql, { userId: user.id })).key });
  }
  const postmaster = await postmasterPid(sql);

  const api = await startService(
    'api',
    {
      DATABASE_URL: db.url,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: ctx.dataDir,
      ARCHIVE_DIR: join(ctx.dataDir, 'sse-fanout-no-archive'),
      YOUTUBE_API_KEY: '',
      WAYBACK_ENABLED: 'false',
    },
    { openFiles: OPEN_FILES, nodeArgs: process.env.SSE_FANOUT_API_NODE_ARGS?.split(' ').filter(Boolean) ?? [] },
  );
  const limit = /Max open files\s+(\d+|unlimited)/.exec(readFileSync(`/proc/${api.pid}/limits`, 'utf8'))?.[1];
  ctx.progress(`API pid ${api.pid} at ${api.url}, ready in ${Math.round(api.readyAt - api.spawnedAt)} ms, open files limit ${limit}`);
  let clients: ClientsHandle | undefined;
  const sampler = memorySampler(api.pid, 100);
  try {
    if (!api.url) throw new Error('the API logged no url');
    const url = new URL(api.url);

    // One session per user, all on the same channel: the first opens the crawl, the others join it.
    const sessions: Array<{ key: string; path: string }> = [];
    for (const { key } of users) {
      const response = await fetch(`${api.url}/api/search`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-API-Key': key }, body: JSON.stringify({ query: CHANNEL_ID }) });
      const body = (await response.json()) as { data?: { sseEndpointUrl: string } };
      if (response.status !== 200 || !body.data) throw new Error(`POST /api/search answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
      sessions.push({ key, path: body.data.sseEndpointUrl });
    }
    const crawls = await sql<{ id: string }[]>`select id::text from crawls where channel_id = ${CHANNEL_ID} and status = 'running'`;
    if (crawls.length !== 1) throw new Error(`expected one running crawl, found ${crawls.length}`);
    const stream = crawlStream(crawls[0]!.id);
    const [jobs] = await sql<{ n: number; locked: number }[]>`select count(*)::int as n, count(locked_at)::int as locked from graphile_worker._private_jobs`;
    const [heartbeats] = await sql<{ n: number }[]>`select count(*)::int as n from worker_heartbeats`.catch(() => [{ n: 0 }]);
    if ((jobs?.locked ?? 0) > 0 || (heartbeats?.n ?? 0) > 0) problems.push(`a worker is running (${heartbeats?.n} heartbeats, ${jobs?.locked} jobs locked): the stream may have other writers`);

    const idle = memoryOf(api.pid)!;
    ctx.progress(`${SESSIONS} sessions on crawl ${crawls[0]!.id} (its job stays queued: no worker); API RSS ${round(idle.rssMiB, 0)} MiB; connecting ${CLIENTS} clients`);

    clients = startClients();
    const connectStarted = performance.now();
    const apiCpuBeforeConnect = cpuOf(api.pid);
    const connectedMessage = clients.next('connected');
    clients.send({
      type: 'connect',
      host: url.hostname,
      port: Number(url.port),
      clients: Array.from({ length: CLIENTS }, (_, i) => sessions[i % SESSIONS]!),
      timeoutMs: CONNECT_TIMEOUT_MS,
    });
    const connected = (await connectedMessage) as Extract<ClientMessage, { type: 'connected' }>;
    const connectWallMs = performance.now() - connectStarted;
    const apiCpuAfterConnect = cpuOf(api.pid);
    if (connected.connected !== CLIENTS) problems.push(`${CLIENTS - connected.connected} of ${CLIENTS} clients did not connect: ${connected.failures.slice(0, 3).join('; ')}`);
    await sleep(500);
    const afterConnect = memoryOf(api.pid)!;
    ctx.progress(`${connected.connected} clients past their snapshot in ${Math.round(connected.rampMs)} ms; API RSS ${round(afterConnect.rssMiB, 0)} MiB; publishing ${COMMITS} commits at ${COMMITS_PER_SECOND}/s`);

    const publishStarted = performance.now();
    const apiCpuStart = cpuOf(api.pid);
    const clientCpuStart = cpuOf(clients.child.pid!);
    const cpuStart = cpuSnapshot(postmaster);
    const commits = await publish(publisher, stream);
    const cpuEnd = cpuSnapshot(postmaster);
    const apiCpuEnd = cpuOf(api.pid);
    const clientCpuEnd = cpuOf(clients.child.pid!);
    const publishSeconds = (performance.now() - publishStarted) / 1000;
    const rssDuringPublish = sampler.maxSince(publishStarted);

    // The end of the crawl, as the worker's finish() writes it.
    await sleep(500);
    const reportMessage = clients.next('report');
    const finishedAt = performance.now();
    await publisher.begin(async (tx) => {
      await tx`update crawls set status = 'complete', finished_at = now() where id = ${crawls[0]!.id}`;
      await appendEvents(tx, stream, [{ type: 'search:complete', payload: { channelId: CHANNEL_ID, totals: { videos: commits.reduce((sum, commit) => sum + commit.events - 1, 0) } } }]);
    });
    const expectedEvents = commits.reduce((sum, commit) => sum + commit.events, 0);
    clients.send({ type: 'finish', acks: commits.map((commit) => commit.ackAt), expectedEvents, timeoutMs: FINISH_TIMEOUT_MS });
    const report = ((await reportMessage) as Extract<ClientMessage, { type: 'report' }>).report;
    const closeMs = performance.now() - finishedAt;
    sampler.stop();
    const apiMemory = memoryOf(api.pid)!;
    const cpu = cpuDelta(cpuStart, cpuEnd);

    if (report.missing || report.clientsShort) problems.push(`${report.missing} events missing at ${report.clientsShort} clients`);
    if (report.duplicatesOrReordered) problems.push(`${report.duplicatesOrReordered} events repeated or out of order`);
    if (report.completed !== CLIENTS || report.stillOpen) problems.push(`${report.completed} of ${CLIENTS} streams got search:complete; ${report.stillOpen} still open after ${FINISH_TIMEOUT_MS / 1000} s`);
    if (report.errors.length) problems.push(`client errors: ${report.errors.slice(0, 3).join('; ')}`);

    const late = commits.map((commit) => commit.lateMs).sort((a, b) => a - b);
    const commitMs = commits.map((commit) => commit.commitMs).sort((a, b) => a - b);
    return {
      problems,
      parameters: {
        sessions: SESSIONS,
        clientsPerSession: CLIENTS_PER_SESSION,
        clients: CLIENTS,
        crawls: 1,
        commitsPerSecond: COMMITS_PER_SECOND,
        seconds: SECONDS,
        commits: COMMITS,
        eventsPerCommit: '1–10 (1 search:progress + 0–9 search:video of about 700 bytes), 5.5 on average',
        api: '`node scripts/bin.mjs api` (child process), LOG_LEVEL=info, DATABASE_POOL_SIZE=10, SSE_HEARTBEAT_SECONDS=15',
        apiOpenFilesLimit: limit,
        clientsProcess: 'lib/sse-fanout-client.ts: node:http, one socket per client, a minimal SSE parser',
        worker: 'none (the crawl job stays queued); events are written by the benchmark with appendEvents',
      },
      results: {
        connect: { rampMs: round(connected.rampMs, 0), wallMs: round(connectWallMs, 0), perClientMs: roundSummary(report.connectMs), apiCpuSeconds: cpuSeconds(apiCpuBeforeConnect, apiCpuAfterConnect) },
        delivery: {
          fromSentAtMs: roundSummary(report.fromSentAt),
          fromCommitMs: roundSummary(report.fromCommit),
          lastClientPerCommitMs: roundSummary(report.lastClientPerCommit),
          delivered: report.delivered,
          expected: expectedEvents * CLIENTS,
          expectedPerClient: expectedEvents,
          missing: report.missing,
          clientsShort: report.clientsShort,
          duplicatesOrReordered: report.duplicatesOrReordered,
          videoBatches: report.batches,
          heartbeats: report.heartbeats,
        },
        publisher: {
          seconds: round(publishSeconds, 2),
          commitMs: { p50: ms(commitMs[Math.floor(commitMs.length / 2)]), p99: ms(commitMs[Math.floor(commitMs.length * 0.99)]), max: ms(commitMs[commitMs.length - 1]) },
          lateMs: { p50: ms(late[Math.floor(late.length / 2)]), max: ms(late[late.length - 1]) },
        },
        end: { completed: report.completed, ended: report.ended, stillOpen: report.stillOpen, closeMs: round(closeMs, 0) },
        apiMemoryMiB: {
          idle: round(idle.rssMiB, 1),
          afterConnect: round(afterConnect.rssMiB, 1),
          maxSampledDuringPublish: round(rssDuringPublish, 1),
          maxSampled: round(sampler.maxSince(), 1),
          peak: round(apiMemory.peakMiB, 1),
          end: round(apiMemory.rssMiB, 1),
        },
        cpuDuringPublish: {
          seconds: round(cpu.seconds, 2),
          apiCores: coresOf(apiCpuStart, apiCpuEnd, cpu.seconds),
          clientsCores: coresOf(clientCpuStart, clientCpuEnd, cpu.seconds),
          postgresCores: cpu.postgresUs === null ? null : round(cpu.postgresUs / 1e6 / cpu.seconds, 2),
          harnessCores: round(cpu.selfUs / 1e6 / cpu.seconds, 2),
          machineCores: cpu.machineBusyUs === null ? null : round(cpu.machineBusyUs / 1e6 / cpu.seconds, 2),
        },
        clientsProcess: { cpuSeconds: round(report.cpuUs / 1e6, 2), maxRssMiB: report.maxRssMiB },
        apiWarnings: api.warnings.map((entry) => String(entry.msg)).slice(0, 10),
      },
    };
  } finally {
    sampler.stop();
    clients?.child.kill();
    await api.stop();
  }
}

function roundSummary(summary: LatencySummary) {
  return Object.fromEntries(Object.entries(summary).map(([key, value]) => [key, key === 'count' ? value : round(value, 2)]));
}

const cpuSeconds = (start: number | undefined, end: number | undefined) => (start === undefined || end === undefined ? null : round((end - start) / 1e6, 2));
const coresOf = (start: number | undefined, end: number | undefined, seconds: number) => (start === undefined || end === undefined ? null : round((end - start) / 1e6 / seconds, 2));

export const benchmark: Benchmark = {
  name: 'sse-fanout',
  title: `${CLIENTS.toLocaleString('en')} concurrent search streams on one API process`,
  description:
    `\`afterimage api\` in a child process; ${CLIENTS.toLocaleString('en')} SSE clients (${SESSIONS} sessions, one per user, all on one crawl × ${CLIENTS_PER_SESSION} clients each) in another. ` +
    `No worker: the benchmark commits ${COMMITS} transactions to the crawl's event stream (${COMMITS_PER_SECOND}/s for ${SECONDS} s, 1–10 events each, stamped with the wall clock just before the commit), ` +
    'then search:complete. Delivery latency is each event\'s arrival at each client minus that stamp (and minus the commit\'s acknowledgement); every client must get every event once, in order, and its stream must close. ' +
    `Targets: p99 ≤ ${TARGET_P99_MS} ms, API RSS ≤ ${TARGET_RSS_MIB} MB.`,
  async run(ctx) {
    const outcome = await run(ctx);
    const r = outcome.results;
    const p99 = r.delivery.fromSentAtMs.p99 as number;
    const peak = r.apiMemoryMiB.peak as number;
    const latencyTable = {
      title: `Delivery latency over ${r.delivery.delivered.toLocaleString('en')} deliveries (${CLIENTS} clients × ${r.delivery.expectedPerClient} events), ms`,
      columns: ['measured from', 'p50', 'p90', 'p95', 'p99', 'p99.9', 'max', `target p99 ≤ ${TARGET_P99_MS}`],
      rows: [
        ['sentAt (stamped before the commit)', r.delivery.fromSentAtMs.p50, r.delivery.fromSentAtMs.p90, r.delivery.fromSentAtMs.p95, r.delivery.fromSentAtMs.p99, r.delivery.fromSentAtMs.p999, r.delivery.fromSentAtMs.max, p99 <= TARGET_P99_MS ? 'met' : 'missed'],
        ['commit acknowledged', r.delivery.fromCommitMs.p50, r.delivery.fromCommitMs.p90, r.delivery.fromCommitMs.p95, r.delivery.fromCommitMs.p99, r.delivery.fromCommitMs.p999, r.delivery.fromCommitMs.max, null],
        ['commit → its last client', r.delivery.lastClientPerCommitMs.p50, r.delivery.lastClientPerCommitMs.p90, r.delivery.lastClientPerCommitMs.p95, r.delivery.lastClientPerCommitMs.p99, r.delivery.lastClientPerCommitMs.p999, r.delivery.lastClientPerCommitMs.max, null],
      ] as Cell[][],
    };
    const runTable = {
      title: 'Connections, completeness and memory',
      columns: ['clients connected', 'ramp-up ms', 'events delivered', 'missing', 'repeated/reordered', 'streams closed', 'API RSS idle MiB', 'after connect MiB', `API peak RSS MiB (≤ ${TARGET_RSS_MIB})`, 'API cores', 'clients cores', 'PG cores'],
      rows: [
        [
          r.end.completed,
          r.connect.rampMs,
          r.delivery.delivered,
          r.delivery.missing,
          r.delivery.duplicatesOrReordered,
          r.end.ended,
          r.apiMemoryMiB.idle,
          r.apiMemoryMiB.afterConnect,
          peak,
          r.cpuDuringPublish.apiCores,
          r.cpuDuringPublish.clientsCores,
          r.cpuDuringPublish.postgresCores,
        ],
      ] as Cell[][],
    };
    const notes = [
      `Latency p99 **${p99} ms** from the pre-commit stamp (${r.delivery.fromCommitMs.p99} ms from the commit's acknowledgement), p50 ${r.delivery.fromSentAtMs.p50} ms, max ${r.delivery.fromSentAtMs.max} ms: target p99 ≤ ${TARGET_P99_MS} ms **${p99 <= TARGET_P99_MS ? 'met' : 'missed'}**. ` +
        `API peak RSS **${peak} MiB** (VmHWM of the API process; ${r.apiMemoryMiB.idle} MiB before the clients, ${r.apiMemoryMiB.afterConnect} MiB with ${CLIENTS} idle streams, up to ${r.apiMemoryMiB.maxSampledDuringPublish} MiB sampled while publishing): target ≤ ${TARGET_RSS_MIB} MB **${peak * 1.048576 <= TARGET_RSS_MIB ? 'met' : 'missed'}**.`,
      `Ramp-up: ${CLIENTS} streams requested at once were all past their snapshot (subscribed to the live feed) after ${r.connect.rampMs} ms (per client p50 ${r.connect.perClientMs.p50} ms, p99 ${r.connect.perClientMs.p99} ms); the API used ${r.connect.apiCpuSeconds} s of CPU for it.`,
      `While publishing (${r.cpuDuringPublish.seconds} s), the API process used ${r.cpuDuringPublish.apiCores} cores, the clients' process ${r.cpuDuringPublish.clientsCores}, PostgreSQL ${r.cpuDuringPublish.postgresCores} and this process ${r.cpuDuringPublish.harnessCores}, of the machine's 2 (${r.cpuDuringPublish.machineCores} busy in all). ` +
        `Commits took ${r.publisher.commitMs.p50} ms (p50), ${r.publisher.commitMs.max} ms at most; the publisher started a commit at most ${r.publisher.lateMs.max} ms after its slot.`,
      `Sessions: ${SESSIONS} users each opened one search session of the same channel (all joined one crawl), ${CLIENTS_PER_SESSION} clients follow each session; the clients run in one Node process on the same machine, so their own CPU competes with the API's.`,
    ];
    return {
      parameters: outcome.parameters,
      results: outcome.results,
      tables: [latencyTable, runTable],
      notes,
      ok: outcome.problems.length === 0,
      problems: outcome.problems,
    };
  },
};
