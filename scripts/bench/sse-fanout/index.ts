/**
 * 1,000 concurrent search streams on one API process: how long an event takes from its commit to
 * every client, and what the API process's memory does meanwhile.
 *
 * The API is `node scripts/bin.mjs api` in a child process (its own RSS, its open-files limit raised);
 * the clients are another child process (sse-fanout/child.ts). No worker runs: the crawl's job
 * stays queued, and this process is the only writer of the crawl's event stream. It commits events
 * with appendEvents at a steady rate, each stamped with the wall-clock time just before its commit;
 * every client records its arrival time, so latency is measured on one clock.
 *
 * Sessions: SESSIONS users each open one search session of the same channel (they all join one
 * crawl, so the API's hub has one shared feed), and CLIENTS_PER_SESSION clients follow each session.
 * A second run with fewer clients per session (fresh database and API) serves as the reference where
 * one API process keeps up, and yields the API's CPU cost per delivered event.
 *
 * For exploring (the defaults are the benchmark): SSE_FANOUT_SESSIONS, SSE_FANOUT_CLIENTS_PER_SESSION,
 * SSE_FANOUT_REFERENCE_CLIENTS_PER_SESSION, SSE_FANOUT_COMMITS_PER_SECOND, SSE_FANOUT_SECONDS, and
 * SSE_FANOUT_API_NODE_ARGS (node options for the API process, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
 */
import { type Benchmark, target, type Target } from '../lib/harness.ts';
import { round } from '../lib/stats.ts';
import { runOnce, type RunResult } from './round.ts';
import {
  CLIENTS,
  CLIENTS_PER_SESSION,
  COMMITS,
  COMMITS_PER_SECOND,
  FINISH_TIMEOUT_MS,
  OPEN_FILES,
  REFERENCE_CLIENTS_PER_SESSION,
  SECONDS,
  SESSIONS,
  TARGET_P99_MS,
  TARGET_RSS_MIB,
} from './shape.ts';

/** The targets hold for the main run (the first); the reference run is for the cost of one delivery. */
function targets(main: RunResult): Target[] {
  return [
    target(`delivery p99, ${main.label} (ms)`, main.delivery.fromSentAtMs.p99, { atMost: TARGET_P99_MS }),
    target(`API peak RSS, ${main.label} (MB)`, round(main.apiMemoryMiB.peak * 1.048576, 1), { atMost: TARGET_RSS_MIB }),
  ];
}

export const benchmark: Benchmark = {
  name: 'sse-fanout',
  title: `${CLIENTS.toLocaleString('en')} concurrent search streams on one API process`,
  description:
    `\`afterimage api\` in a child process; ${CLIENTS.toLocaleString('en')} SSE clients in another (${SESSIONS} users each open one search session of the same channel, so all join one crawl; ${CLIENTS_PER_SESSION} clients follow each session). ` +
    `No worker: the benchmark commits ${COMMITS} transactions to the crawl's event stream with appendEvents (${COMMITS_PER_SECOND}/s for ${SECONDS} s, 1–10 events each, stamped with the wall clock just before the commit), ` +
    "then search:complete. Latency is each event's arrival at each client minus that stamp; every client must get every event once, in order, and its stream must close. " +
    `A second run with ${SESSIONS} × ${REFERENCE_CLIENTS_PER_SESSION} clients is the reference. Targets (${CLIENTS.toLocaleString('en')} clients): p99 ≤ ${TARGET_P99_MS} ms, API RSS ≤ ${TARGET_RSS_MIB} MB.`,
  async run(ctx) {
    const problems: string[] = [];
    const runs: RunResult[] = [];
    for (const clientsPerSession of [CLIENTS_PER_SESSION, REFERENCE_CLIENTS_PER_SESSION]) {
      const { problems: found, result } = await runOnce(ctx, SESSIONS, clientsPerSession);
      problems.push(...found);
      runs.push(result);
      ctx.progress(
        `${result.label}: p99 ${result.delivery.fromSentAtMs.p99} ms, API peak RSS ${result.apiMemoryMiB.peak} MiB, ${result.delivery.missing} missing, ${result.end.ended}/${result.clients} closed`,
      );
    }
    return {
      parameters: {
        sessions: SESSIONS,
        clientsPerSession: [CLIENTS_PER_SESSION, REFERENCE_CLIENTS_PER_SESSION],
        crawls: 1,
        commitsPerSecond: COMMITS_PER_SECOND,
        seconds: SECONDS,
        commits: COMMITS,
        eventsPerCommit: '1–10 (1 search:progress + 0–9 search:video of about 700 bytes), 5.5 on average',
        api:
          '`node scripts/bin.mjs api` (child process), LOG_LEVEL=info, DATABASE_POOL_SIZE=10, SSE_HEARTBEAT_SECONDS=15, open files ≥ ' +
          OPEN_FILES,
        clientsProcess: 'sse-fanout/child.ts: node:http, one socket per client, a minimal SSE parser',
        worker: 'none (the crawl job stays queued); events are written by the benchmark with appendEvents',
        finishTimeoutMs: FINISH_TIMEOUT_MS,
      },
      results: { runs },
      targets: targets(runs[0]!),
      ok: problems.length === 0,
      problems,
    };
  },
};
