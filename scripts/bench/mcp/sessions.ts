import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type BenchContext, sleep } from '../lib/harness.ts';
import { startService } from '../lib/processes.ts';
import { percentile, round } from '../lib/stats.ts';
import { cpuOf, memoryOf, memorySampler } from '../lib/usage.ts';
import { callTool, connectClient } from './operations.ts';
import type { Seeded } from './seed.ts';
import { CALLS_PER_SESSION, PAGE_SIZE, SESSIONS } from './shape.ts';

interface SessionsResult {
  sessions: number;
  callsPerSession: number;
  connected: number;
  callsOk: number;
  callsFailed: number;
  firstFailure: string | null;
  connectMs: { p50: number; p99: number; allConnectedMs: number };
  callMs: { p50: number; p99: number; allDoneMs: number };
  rssMiB: { idle: number; beforeSessions: number; sampledPeak: number; vmHwm: number; afterClose: number };
  serverCpuMs: number | null;
}

/** SESSIONS clients connected at once to a fresh API process, each making CALLS_PER_SESSION calls at once with the others. */
export async function sessions(
  ctx: BenchContext,
  env: Record<string, string>,
  seeded: Seeded,
  keys: string[],
  problems: string[],
): Promise<SessionsResult> {
  const api = await startService('api', env);
  const sampler = memorySampler(api.pid, 50);
  const clients: Client[] = [];
  try {
    const baseUrl = api.url!;
    await sleep(1_000);
    const idle = memoryOf(api.pid)!.rssMiB;
    // One client first, so that what loads on first use (the SDK's server side, zod schemas) is not counted as per-session cost.
    const warm = await connectClient(baseUrl, keys[0]!);
    const warmProblem =
      (await callTool(warm, 'get_video', { videoId: seeded.videoIds[0]! }, Boolean)) ??
      (await callTool(warm, 'search_videos', { q: seeded.words[0]!, pageSize: PAGE_SIZE }, Boolean));
    if (warmProblem) problems.push(`sessions warm-up: ${warmProblem}`);
    await warm.close();
    await sleep(500);
    const beforeSessions = memoryOf(api.pid)!.rssMiB;
    const since = performance.now();
    const cpuBefore = cpuOf(api.pid);
    ctx.progress(
      `sessions: API pid ${api.pid}, RSS idle ${round(idle, 1)} MiB, after one client ${round(beforeSessions, 1)} MiB; connecting ${SESSIONS} clients at once`,
    );

    const connectMs: number[] = [];
    const connectStarted = performance.now();
    const settled = await Promise.allSettled(
      keys.slice(0, SESSIONS).map(async (key) => {
        const t = performance.now();
        const client = await connectClient(baseUrl, key);
        connectMs.push(performance.now() - t);
        clients.push(client);
        return client;
      }),
    );
    const allConnectedMs = performance.now() - connectStarted;
    const connected = settled.filter((s) => s.status === 'fulfilled').map((s) => (s as PromiseFulfilledResult<Client>).value);
    const refused = settled.find((s) => s.status === 'rejected') as PromiseRejectedResult | undefined;
    if (refused)
      problems.push(`sessions: ${SESSIONS - connected.length} clients failed to connect, first: ${(refused.reason as Error)?.message}`);

    const callMs: number[] = [];
    let callsFailed = 0;
    let firstFailure: string | null = null;
    const callsStarted = performance.now();
    await Promise.all(
      connected.map(async (client, c) => {
        for (let n = 0; n < CALLS_PER_SESSION; n++) {
          const i = c * CALLS_PER_SESSION + n;
          const videoId = seeded.videoIds[(i * 13) % seeded.videoIds.length]!;
          const t = performance.now();
          let problem: string | undefined;
          try {
            problem =
              n === 1
                ? await callTool(client, 'search_videos', { q: seeded.words[i % seeded.words.length]!, pageSize: PAGE_SIZE }, (data) =>
                    Array.isArray(data?.videos),
                  )
                : await callTool(client, 'get_video', { videoId }, (data) => data?.videoId === videoId);
          } catch (error) {
            problem = (error as Error).message;
          }
          callMs.push(performance.now() - t);
          if (problem) {
            callsFailed += 1;
            firstFailure ??= problem;
          }
        }
      }),
    );
    const allDoneMs = performance.now() - callsStarted;
    const cpuAfter = cpuOf(api.pid);
    const vmHwm = memoryOf(api.pid)!.peakMiB;
    const sampledPeak = sampler.maxSince(since);
    await Promise.all(clients.map((client) => client.close().catch(() => {})));
    clients.length = 0;
    await sleep(1_000);
    const afterClose = memoryOf(api.pid)!.rssMiB;
    if (callsFailed > 0) problems.push(`sessions: ${callsFailed} of ${callMs.length} calls failed, first: ${firstFailure}`);
    connectMs.sort((a, b) => a - b);
    callMs.sort((a, b) => a - b);
    return {
      sessions: SESSIONS,
      callsPerSession: CALLS_PER_SESSION,
      connected: connected.length,
      callsOk: callMs.length - callsFailed,
      callsFailed,
      firstFailure,
      connectMs: {
        p50: round(percentile(connectMs, 50), 1)!,
        p99: round(percentile(connectMs, 99), 1)!,
        allConnectedMs: round(allConnectedMs, 0)!,
      },
      callMs: { p50: round(percentile(callMs, 50), 1)!, p99: round(percentile(callMs, 99), 1)!, allDoneMs: round(allDoneMs, 0)! },
      rssMiB: {
        idle: round(idle, 1)!,
        beforeSessions: round(beforeSessions, 1)!,
        sampledPeak: round(sampledPeak, 1)!,
        vmHwm: round(vmHwm, 1)!,
        afterClose: round(afterClose, 1)!,
      },
      serverCpuMs: cpuBefore === undefined || cpuAfter === undefined ? null : round((cpuAfter - cpuBefore) / 1000, 0),
    };
  } finally {
    sampler.stop();
    await Promise.all(clients.map((client) => client.close().catch(() => {})));
    await api.stop();
  }
}
