import { readFileSync } from 'node:fs';
import { createApiKey } from '../../../core/accounts/createApiKey.ts';
import { createUser } from '../../../core/accounts/createUser.ts';
import { appendEvents, crawlStream } from '../../../core/events/events.ts';
import { searchEvents } from '../../../core/events/searchEvents.ts';
import { updateTier } from '../../../core/tiers/updateTier.ts';
import { type BenchContext, sleep } from '../lib/harness.ts';
import { nodeArgsKnob } from '../lib/knobs.ts';
import { postmasterPid, sourcelessApiEnv, startService } from '../lib/processes.ts';
import { round } from '../lib/stats.ts';
import { cpuDelta, cpuOf, cpuSnapshot, memoryOf, memorySampler } from '../lib/usage.ts';
import type { ClientMessage, LatencySummary } from './protocol.ts';
import { startClients, type ClientsHandle } from './clients.ts';
import { publish } from './publish.ts';
import {
  CHANNEL_ID,
  COMMITS,
  COMMITS_PER_SECOND,
  CONNECT_TIMEOUT_MS,
  FINISH_TIMEOUT_MS,
  OPEN_FILES,
  SECONDS,
  TARGET_P99_MS,
  eventsInCommit,
} from './shape.ts';

const ms = (value: number | undefined) => (value === undefined ? null : round(value, 1));
const roundSummary = (summary: LatencySummary) =>
  Object.fromEntries(Object.entries(summary).map(([key, value]) => [key, key === 'count' ? value : round(value, 2)])) as Record<
    keyof LatencySummary,
    number
  >;
const coresOf = (start: number | undefined, end: number | undefined, seconds: number) =>
  start === undefined || end === undefined ? null : round((end - start) / 1e6 / seconds, 2);

export async function runOnce(ctx: BenchContext, sessionsCount: number, clientsPerSession: number) {
  const clientCount = sessionsCount * clientsPerSession;
  const label = `${clientCount} clients`;
  const problems: string[] = [];
  const db = await ctx.database();
  const sql = db.pool({ max: 2, role: 'bench' });
  const publisher = db.pool({ max: 1, role: 'bench-publisher' });
  await updateTier(sql, 'pro', { limits: { requestsPerMinute: null, channelSearchesPerHour: null } });
  await sql`insert into channels (channel_id, title) values (${CHANNEL_ID}, 'Bench fan-out channel')`;
  const users: Array<{ key: string }> = [];
  for (let i = 0; i < sessionsCount; i++) {
    const user = await createUser(sql, { email: `fanout-${i}@example.org`, tier: 'pro', isAdmin: false });
    users.push({ key: (await createApiKey(sql, { userId: user.id })).key });
  }
  const postmaster = await postmasterPid(sql);

  const api = await startService('api', sourcelessApiEnv(ctx.dataDir, db.url, 'sse-fanout'), {
    openFiles: OPEN_FILES,
    nodeArgs: nodeArgsKnob('SSE_FANOUT_API_NODE_ARGS'),
  });
  const openFiles = /Max open files\s+(\d+|unlimited)/.exec(readFileSync(`/proc/${api.pid}/limits`, 'utf8'))?.[1] ?? null;
  ctx.progress(
    `${label}: API pid ${api.pid} at ${api.url}, ready in ${Math.round(api.readyAt - api.spawnedAt)} ms, open files limit ${openFiles}`,
  );
  let clients: ClientsHandle | undefined;
  const sampler = memorySampler(api.pid, 100);
  try {
    if (!api.url) throw new Error('the API logged no url');
    const url = new URL(api.url);

    // One session per user, all on the same channel: the first opens the crawl, the others join it.
    const sessions: Array<{ key: string; path: string }> = [];
    for (const { key } of users) {
      const response = await fetch(`${api.url}/api/search`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-API-Key': key },
        body: JSON.stringify({ query: CHANNEL_ID }),
      });
      const body = (await response.json()) as { data?: { sseEndpointUrl: string } };
      if (response.status !== 200 || !body.data)
        throw new Error(`POST /api/search answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
      sessions.push({ key, path: body.data.sseEndpointUrl });
    }
    const crawls = await sql<{ id: string }[]>`select id::text from crawls where channel_id = ${CHANNEL_ID} and status = 'running'`;
    if (crawls.length !== 1) throw new Error(`expected one running crawl, found ${crawls.length}`);
    const crawlId = crawls[0]!.id;
    const stream = crawlStream(crawlId);
    const [jobs] = await sql<{ locked: number }[]>`select count(locked_at)::int as locked from graphile_worker._private_jobs`;
    const [heartbeats] = await sql<{ n: number }[]>`select count(*)::int as n from worker_heartbeats`;
    if ((jobs?.locked ?? 0) > 0 || (heartbeats?.n ?? 0) > 0)
      problems.push(
        `${label}: a worker is running (${heartbeats?.n} heartbeats, ${jobs?.locked} jobs locked), so the stream may have other writers`,
      );

    const idle = memoryOf(api.pid)!;
    ctx.progress(
      `${label}: ${sessionsCount} sessions on crawl ${crawlId} (its job stays queued: no worker); API RSS ${round(idle.rssMiB, 0)} MiB; connecting`,
    );

    clients = startClients();
    const apiCpuBeforeConnect = cpuOf(api.pid);
    const connectedMessage = clients.next('connected');
    clients.send({
      type: 'connect',
      host: url.hostname,
      port: Number(url.port),
      clients: Array.from({ length: clientCount }, (_, i) => sessions[i % sessionsCount]!),
      timeoutMs: CONNECT_TIMEOUT_MS,
      expectedDeliveries: clientCount * Array.from({ length: COMMITS }, (_, seq) => eventsInCommit(seq)).reduce((sum, n) => sum + n, 0),
    });
    const connected = (await connectedMessage) as Extract<ClientMessage, { type: 'connected' }>;
    const apiCpuAfterConnect = cpuOf(api.pid);
    if (connected.connected !== clientCount)
      problems.push(`${label}: ${clientCount - connected.connected} clients did not connect: ${connected.failures.slice(0, 3).join('; ')}`);
    await sleep(500);
    const afterConnect = memoryOf(api.pid)!;
    ctx.progress(
      `${label}: all past their snapshot in ${Math.round(connected.rampMs)} ms; API RSS ${round(afterConnect.rssMiB, 0)} MiB; publishing ${COMMITS} commits at ${COMMITS_PER_SECOND}/s`,
    );

    const publishStarted = performance.now();
    const apiCpuStart = cpuOf(api.pid);
    const clientCpuStart = cpuOf(clients.child.pid!);
    const cpuStart = cpuSnapshot(postmaster);
    const commits = await publish(publisher, stream);
    const cpuEnd = cpuSnapshot(postmaster);
    const apiCpuEnd = cpuOf(api.pid);
    const clientCpuEnd = cpuOf(clients.child.pid!);
    const rssDuringPublish = sampler.maxSince(publishStarted);

    // The end of the crawl, as the worker's finish() writes it.
    const reportMessage = clients.next('report');
    const finishedAt = performance.now();
    await publisher.begin(async (tx) => {
      await tx`update crawls set status = 'complete', finished_at = now() where id = ${crawlId}`;
      await appendEvents(tx, stream, [
        searchEvents.complete({
          channelId: CHANNEL_ID,
          totals: { videos: commits.reduce((sum, commit) => sum + commit.events - 1, 0) },
          failedSources: [],
          morePages: false,
        }),
      ]);
    });
    const expectedEvents = commits.reduce((sum, commit) => sum + commit.events, 0);
    clients.send({ type: 'finish', acks: commits.map((commit) => commit.ackAt), expectedEvents, timeoutMs: FINISH_TIMEOUT_MS });
    const report = ((await reportMessage) as Extract<ClientMessage, { type: 'report' }>).report;
    const drainedMs = performance.now() - finishedAt;
    const apiCpuDrained = cpuOf(api.pid);
    sampler.stop();
    const apiMemory = memoryOf(api.pid)!;
    const cpu = cpuDelta(cpuStart, cpuEnd);

    if (report.missing || report.clientsShort)
      problems.push(
        `${label}: ${report.missing} events missing at ${report.clientsShort} clients ${FINISH_TIMEOUT_MS / 1000} s after search:complete`,
      );
    if (report.duplicatesOrReordered) problems.push(`${label}: ${report.duplicatesOrReordered} events repeated or out of order`);
    if (report.completed !== clientCount || report.stillOpen)
      problems.push(
        `${label}: ${report.completed} of ${clientCount} streams got search:complete; ${report.stillOpen} still open ${FINISH_TIMEOUT_MS / 1000} s after it`,
      );
    if (report.errors.length) problems.push(`${label}: client errors: ${report.errors.slice(0, 3).join('; ')}`);

    const late = commits.map((commit) => commit.lateMs).sort((a, b) => a - b);
    const commitMs = commits.map((commit) => commit.commitMs).sort((a, b) => a - b);
    // The timeline: per second of publishing, the slowest delivery of its commits.
    const perSecond: Array<number | null> = [];
    for (let second = 0; second < SECONDS; second++) {
      const slice = report.lastClientByCommit
        .slice(second * COMMITS_PER_SECOND, (second + 1) * COMMITS_PER_SECOND)
        .filter((value): value is number => value !== null);
      perSecond.push(slice.length ? Math.round(Math.max(...slice)) : null);
    }
    const firstLate = report.lastClientByCommit.findIndex((value) => value !== null && value > TARGET_P99_MS);
    const apiCpuSeconds = apiCpuStart === undefined || apiCpuDrained === undefined ? null : (apiCpuDrained - apiCpuStart) / 1e6;
    const busy = cpu.machineBusyUs === null ? null : cpu.machineBusyUs / 1e6;
    const ours =
      [apiCpuEnd! - apiCpuStart!, clientCpuEnd! - clientCpuStart!, cpu.postgresUs ?? 0, cpu.selfUs].reduce((sum, us) => sum + us, 0) / 1e6;
    return {
      problems,
      result: {
        label,
        sessions: sessionsCount,
        clientsPerSession,
        clients: clientCount,
        apiOpenFilesLimit: openFiles,
        connect: {
          connected: connected.connected,
          rampMs: round(connected.rampMs, 0)!,
          perClientMs: roundSummary(report.connectMs),
          apiCpuSeconds:
            apiCpuBeforeConnect === undefined || apiCpuAfterConnect === undefined
              ? null
              : round((apiCpuAfterConnect - apiCpuBeforeConnect) / 1e6, 2),
        },
        delivery: {
          fromSentAtMs: roundSummary(report.fromSentAt),
          fromCommitMs: roundSummary(report.fromCommit),
          lastClientPerCommitMs: roundSummary(report.lastClientPerCommit),
          /** Per second of publishing: the slowest delivery of that second's commits, ms. */
          slowestPerSecondMs: perSecond,
          /** When (s into publishing) a commit first took longer than the target to reach its last client; null if never. */
          firstLateAtSecond: firstLate === -1 ? null : round(firstLate / COMMITS_PER_SECOND, 2),
          delivered: report.delivered,
          expected: expectedEvents * clientCount,
          expectedPerClient: expectedEvents,
          missing: report.missing,
          clientsShort: report.clientsShort,
          duplicatesOrReordered: report.duplicatesOrReordered,
          /** Streams the API ended because their client fell too far behind; each resumed with Last-Event-ID. */
          resumed: report.resumed,
          videoBatches: report.batches,
          heartbeats: report.heartbeats,
        },
        publisher: {
          commits: commits.length,
          commitMs: {
            p50: ms(commitMs[Math.floor(commitMs.length / 2)]),
            p99: ms(commitMs[Math.floor(commitMs.length * 0.99)]),
            max: ms(commitMs[commitMs.length - 1]),
          },
          lateStartMs: { p50: ms(late[Math.floor(late.length / 2)]), max: ms(late[late.length - 1]) },
        },
        end: { completed: report.completed, ended: report.ended, stillOpen: report.stillOpen, afterCompleteMs: round(drainedMs, 0)! },
        apiMemoryMiB: {
          idle: round(idle.rssMiB, 1)!,
          afterConnect: round(afterConnect.rssMiB, 1)!,
          maxSampledWhilePublishing: round(rssDuringPublish, 1)!,
          maxSampled: round(sampler.maxSince(), 1)!,
          peak: round(apiMemory.peakMiB, 1)!,
          end: round(apiMemory.rssMiB, 1)!,
        },
        cpuWhilePublishing: {
          seconds: round(cpu.seconds, 2)!,
          apiCores: coresOf(apiCpuStart, apiCpuEnd, cpu.seconds),
          clientsCores: coresOf(clientCpuStart, clientCpuEnd, cpu.seconds),
          postgresCores: cpu.postgresUs === null ? null : round(cpu.postgresUs / 1e6 / cpu.seconds, 2),
          harnessCores: round(cpu.selfUs / 1e6 / cpu.seconds, 2),
          machineCores: busy === null ? null : round(busy / cpu.seconds, 2),
          /** Cores busy with other processes of the machine (not API, clients, PostgreSQL or this one): a disturbance gauge. */
          otherCores: busy === null ? null : round(Math.max(0, busy - ours) / cpu.seconds, 2),
        },
        /** API CPU from the first commit until every stream had ended, per delivered event, µs. */
        apiCpuUsPerDelivery: apiCpuSeconds === null || report.delivered === 0 ? null : round((apiCpuSeconds * 1e6) / report.delivered, 1),
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

export type RunResult = Awaited<ReturnType<typeof runOnce>>['result'];
