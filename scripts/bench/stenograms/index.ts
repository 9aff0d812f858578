/**
 * Private stenograms, two parts:
 *   offline  the built-in generator (createOfflineStenogramGenerator, afterimage-stenogram-1) on
 *            generated 2-hour and 30-minute transcripts: ms per stenogram after a warm-up, words per
 *            second, and the peak RSS of a process doing only that (stenograms/child.ts, one
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
import { type Benchmark, target } from '../lib/harness.ts';
import { offlinePart } from './offline.ts';
import { streamRound } from './round.ts';
import {
  HOLD_MS,
  INPUTS_PER_SIZE,
  PARTS,
  ROUND_MINUTES,
  SEED,
  SIZES,
  STENOGRAMS_PER_DAY,
  STREAMS,
  STREAM_TIMEOUT_MS,
  USERS,
  WORKER_CONCURRENCY,
} from './shape.ts';

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
          process: 'stenograms/child.ts (fork), one per size',
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
