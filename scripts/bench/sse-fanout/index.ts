/**
 * 1,000 concurrent search streams on one API process: how long an event takes from its commit to every
 * client, and the API's memory meanwhile. The API and the clients (clients.ts) run in child processes. No
 * worker runs, so this process is the crawl's only writer: it commits events with appendEvents at a steady
 * rate, each stamped with the wall clock just before its commit, and the clients time arrivals on that clock.
 * Knobs: SSE_FANOUT_SESSIONS, SSE_FANOUT_CLIENTS_PER_SESSION, SSE_FANOUT_COMMITS_PER_SECOND, SSE_FANOUT_SECONDS,
 * SSE_FANOUT_API_NODE_ARGS (node options for the API, e.g. "--cpu-prof").
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createApiKey } from '../../../core/accounts/createApiKey.ts';
import { createUser } from '../../../core/accounts/createUser.ts';
import type { Sql } from '../../../core/db/database.ts';
import { appendEvents, crawlStream } from '../../../core/events/events.ts';
import { type SearchEvent, searchEvents } from '../../../core/events/searchEvents.ts';
import { updateTier } from '../../../core/tiers/updateTier.ts';
import type { VideoObject } from '../../../core/videos/videoObject.ts';
import { type Benchmark, sleep, target } from '../lib/harness.ts';
import { nodeArgsKnob, numberKnob } from '../lib/knobs.ts';
import { postmasterPid, sourcelessApiEnv, startService } from '../lib/processes.ts';
import { round } from '../lib/stats.ts';
import { cpuDelta, cpuOf, cpuSnapshot, memoryOf } from '../lib/usage.ts';
import type { ClientMessage, ParentMessage } from './clients.ts';

const SESSIONS = numberKnob('SSE_FANOUT_SESSIONS', 10);
const CLIENTS_PER_SESSION = numberKnob('SSE_FANOUT_CLIENTS_PER_SESSION', 100);
const CLIENTS = SESSIONS * CLIENTS_PER_SESSION;
const COMMITS_PER_SECOND = numberKnob('SSE_FANOUT_COMMITS_PER_SECOND', 20);
const SECONDS = numberKnob('SSE_FANOUT_SECONDS', 20);
const COMMITS = COMMITS_PER_SECOND * SECONDS;
/** Events per commit: one search:progress, then 0–9 search:video (5.5 events on average). */
const eventsInCommit = (seq: number) => 1 + ((seq * 7) % 10);
const TARGET = { p99Ms: 100, rssMB: 250 };
const OPEN_FILES = 8_192;
/** How long connecting may take, and the clients after search:complete to have their streams closed. */
const TIMEOUT_MS = 60_000;
const CHANNEL_ID = 'UCbenchFanout1000clients';

/** The clients' process, its open-files limit raised through bash, which then execs node (keeping the IPC channel). */
function startClients() {
  const raise = `if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt ${OPEN_FILES} ]; then ulimit -n ${OPEN_FILES} || exit 97; fi`;
  const script = fileURLToPath(new URL('./clients.ts', import.meta.url));
  const child = spawn('bash', ['-c', `${raise}; exec "$0" "$@"`, process.execPath, '--import', 'tsx', script], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ask = <T extends ClientMessage['type']>(message: ParentMessage, type: T) =>
    new Promise<Extract<ClientMessage, { type: T }>>((resolve, reject) => {
      const exited = (code: number | null) => reject(new Error(`the stream clients exited (${code})`));
      child.once('exit', exited).once('message', (reply: ClientMessage) => {
        child.off('exit', exited);
        if (reply.type === type) resolve(reply as Extract<ClientMessage, { type: T }>);
        else reject(new Error(`the stream clients failed: ${reply.type === 'failed' ? reply.message : reply.type}`));
      });
      child.send(message);
    });
  return { ask, stop: () => child.kill() };
}

/** A search:video shaped and sized like a real one (about 700 bytes), stamped for the clients. */
function videoEvent(seq: number, idx: number, stamp: object): SearchEvent {
  const videoId = `v${String(seq).padStart(5, '0')}_${String(idx).padStart(4, '0')}`.slice(0, 11);
  const text = `Restoring a vintage lathe from scrap, part ${seq}.${idx}. Today we take the old lathe apart and clean every part.`;
  const video = { videoId, title: text.slice(0, 60), description: text.repeat(3), channelId: CHANNEL_ID, channelTitle: 'Bench fan-out' };
  const facts = { duration: 600 + seq, viewCount: 1000 * seq + idx, uploadDate: '2024-06-01', status: 'live', sources: ['youtube_api'] };
  const thumbnailUrl = `https://i.ytimg.com/vi/${videoId}/hqdefault.jpg`;
  return searchEvents.video({ ...video, ...facts, thumbnailUrl, tags: ['restoration', 'workshop'], ...stamp } as unknown as VideoObject);
}

/** COMMITS transactions on a fixed schedule; how long each commit took, ms. */
async function publish(sql: Sql, stream: string): Promise<number[]> {
  const commitMs: number[] = [];
  const start = performance.now() + 50;
  for (let seq = 0; seq < COMMITS; seq++) {
    await sleep(start + (seq * 1000) / COMMITS_PER_SECOND - performance.now());
    const began = performance.now();
    const stamp = { seq, sentAt: performance.timeOrigin + began };
    const n = eventsInCommit(seq);
    const events: SearchEvent[] = [
      searchEvents.progress({ stage: 'youtube_api', percent: Math.floor((seq / COMMITS) * 100), videosInBatch: n - 1, ...stamp }),
    ];
    for (let idx = 1; idx < n; idx++) events.push(videoEvent(seq, idx, stamp));
    await sql.begin((tx) => appendEvents(tx, stream, events));
    commitMs.push(performance.now() - began);
  }
  return commitMs;
}

export const benchmark: Benchmark = {
  name: 'sse-fanout',
  title: `${CLIENTS.toLocaleString('en')} concurrent search streams on one API process`,
  description:
    `\`afterimage api\` in a child process, ${CLIENTS.toLocaleString('en')} SSE clients in another (${SESSIONS} users each open one search session of the same channel, so all join one crawl; ${CLIENTS_PER_SESSION} clients follow each session). ` +
    `No worker: the benchmark commits ${COMMITS} transactions to the crawl's event stream (${COMMITS_PER_SECOND}/s for ${SECONDS} s, 1–10 events each, stamped just before the commit), then search:complete. ` +
    `Latency is each event's arrival at each client minus that stamp. Targets: p99 ≤ ${TARGET.p99Ms} ms, API RSS ≤ ${TARGET.rssMB} MB.`,
  async run(ctx) {
    const problems: string[] = [];
    const db = await ctx.database();
    const sql = db.pool({ max: 2, role: 'bench' });
    const publisher = db.pool({ max: 1, role: 'bench-publisher' });
    await updateTier(sql, 'pro', { limits: { requestsPerMinute: null, channelSearchesPerHour: null } });
    await sql`insert into channels (channel_id, title) values (${CHANNEL_ID}, 'Bench fan-out channel')`;
    const keys: string[] = [];
    for (let i = 0; i < SESSIONS; i++) {
      const user = await createUser(sql, { email: `fanout-${i}@example.org`, tier: 'pro', isAdmin: false });
      keys.push((await createApiKey(sql, { userId: user.id })).key);
    }
    const postmaster = await postmasterPid(sql);
    const api = await startService('api', sourcelessApiEnv(ctx.dataDir, db.url, 'sse-fanout'), {
      openFiles: OPEN_FILES,
      nodeArgs: nodeArgsKnob('SSE_FANOUT_API_NODE_ARGS'),
    });
    let clients: ReturnType<typeof startClients> | undefined;
    try {
      // One session per user, all on the same channel: the first opens the crawl, the others join it.
      const sessions: Array<{ key: string; path: string }> = [];
      for (const key of keys) {
        const response = await fetch(`${api.url}/api/search`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-API-Key': key },
          body: JSON.stringify({ query: CHANNEL_ID }),
        });
        const body = (await response.json()) as { data?: { sseEndpointUrl: string } };
        if (!body.data) throw new Error(`POST /api/search answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
        sessions.push({ key, path: body.data.sseEndpointUrl });
      }
      const [crawl] = await sql<{ id: string }[]>`select id::text from crawls where channel_id = ${CHANNEL_ID} and status = 'running'`;
      const stream = crawlStream(crawl!.id);
      const idleMiB = memoryOf(api.pid)!.rssMiB;

      clients = startClients();
      const { hostname, port } = new URL(api.url!);
      const eventsPerClient = Array.from({ length: COMMITS }, (_, seq) => eventsInCommit(seq)).reduce((sum, n) => sum + n, 0);
      const streams = Array.from({ length: CLIENTS }, (_, i) => sessions[i % SESSIONS]!);
      const expected = eventsPerClient * CLIENTS;
      const connect: ParentMessage = { type: 'connect', host: hostname, port: Number(port), streams, expected, timeoutMs: TIMEOUT_MS };
      const connected = await clients.ask(connect, 'connected');
      if (connected.connected < CLIENTS) problems.push(`${CLIENTS - connected.connected} clients did not connect: ${connected.errors[0]}`);
      await sleep(500);
      const connectedMiB = memoryOf(api.pid)!.rssMiB;
      ctx.progress(
        `${connected.connected} clients past their snapshot in ${Math.round(connected.rampMs)} ms; publishing ${COMMITS} commits`,
      );

      const cpuStart = cpuSnapshot(postmaster);
      const apiCpuStart = cpuOf(api.pid)!;
      const commitMs = (await publish(publisher, stream)).sort((a, b) => a - b);
      const cpu = cpuDelta(cpuStart, cpuSnapshot(postmaster));
      const apiCpuPublishing = cpuOf(api.pid)! - apiCpuStart;
      // The end of the crawl, as the worker writes it.
      await publisher.begin(async (tx) => {
        await tx`update crawls set status = 'complete', finished_at = now() where id = ${crawl!.id}`;
        const totals = { videos: eventsPerClient - COMMITS };
        await appendEvents(tx, stream, [searchEvents.complete({ channelId: CHANNEL_ID, totals, failedSources: [], morePages: false })]);
      });
      const { report } = await clients.ask({ type: 'finish', timeoutMs: TIMEOUT_MS }, 'report');
      const apiCpuUs = cpuOf(api.pid)! - apiCpuStart;
      const memory = memoryOf(api.pid)!;
      // A run whose events did not all arrive, or whose streams did not all end, measured something else.
      if (report.errors.length) problems.push(`client errors: ${report.errors.slice(0, 3).join('; ')}`);
      if (report.delivered !== expected) problems.push(`${report.delivered} of ${expected} events delivered`);
      if (report.completed < CLIENTS) problems.push(`${report.completed} of ${CLIENTS} streams got search:complete`);
      ctx.progress(`p99 ${report.latencyMs.p99} ms, API peak RSS ${round(memory.peakMiB, 0)} MiB, ${report.completed} streams complete`);
      const cores = (us: number | null) => (us === null ? null : round(us / 1e6 / cpu.seconds, 2));
      return {
        parameters: { sessions: SESSIONS, clientsPerSession: CLIENTS_PER_SESSION, commitsPerSecond: COMMITS_PER_SECOND, seconds: SECONDS },
        results: {
          clients: CLIENTS,
          connected: connected.connected,
          rampMs: round(connected.rampMs, 0),
          ...report,
          expected,
          commitMs: { p50: round(commitMs[Math.floor(COMMITS / 2)]!, 1), max: round(commitMs.at(-1)!, 1) },
          apiMemoryMiB: { idle: round(idleMiB, 1), afterConnect: round(connectedMiB, 1), peak: round(memory.peakMiB, 1) },
          apiCpuUsPerDelivery: report.delivered ? round(apiCpuUs / report.delivered, 1) : null,
          coresWhilePublishing: { api: cores(apiCpuPublishing), postgres: cores(cpu.postgresUs), machine: cores(cpu.machineBusyUs) },
        },
        targets: [
          target('delivery p99 (ms)', report.latencyMs.p99, { atMost: TARGET.p99Ms }),
          target('API peak RSS (MB)', round(memory.peakMiB * 1.048576, 1), { atMost: TARGET.rssMB }),
        ],
        ok: problems.length === 0,
        problems,
      };
    } finally {
      clients?.stop();
      await api.stop();
    }
  },
};
