/** Private stenograms; STENOGRAMS_PARTS picks the parts (offline, streams), STENOGRAMS_ROUND_MINUTES the rounds' transcripts. */
import type { StenogramInput } from '../../../core/stenograms/stenogram.ts';
import { fakeVideoId } from '../../../test/kit/ids.ts';
import { mix32 } from '../../../test/kit/random.ts';
import { conversation } from '../lib/corpus.ts';
import { type Benchmark, type BenchContext, target } from '../lib/harness.ts';
import { listKnob } from '../lib/knobs.ts';
import { distribution, median, round } from '../lib/stats.ts';
import { timeOffline } from '../summaries/offline.ts';
import { STREAMS, streamRound } from './streams.ts';

const PARTS = new Set(listKnob('STENOGRAMS_PARTS', 'offline,streams'));
const ROUND_MINUTES = listKnob('STENOGRAMS_ROUND_MINUTES', '30,120').map(Number);
const INPUTS = 4;
const SIZES = [
  { minutes: 120, runs: 60 },
  { minutes: 30, runs: 200 },
];

async function offlinePart(ctx: BenchContext) {
  const results = [];
  for (const { minutes, runs } of SIZES) {
    const made = Array.from({ length: INPUTS * 2 }, (_, index) => conversation(minutes, mix32(1, minutes * 1_000 + index)));
    const inputs = made.map(
      ({ cues }, i): StenogramInput => ({ videoId: fakeVideoId(`stenograms:${i}`), title: null, channelTitle: null, language: 'en', cues }),
    );
    const request = { inputs: inputs.slice(0, INPUTS), warmup: inputs.slice(INPUTS), runs };
    const report = await timeOffline('stenograms', request);
    const wordsPerSecond = report.wallMs.map((ms, run) => made[run % INPUTS]!.words / (ms / 1000));
    const result = {
      minutes,
      runs,
      wallMs: distribution(report.wallMs),
      cpuMs: distribution(report.cpuMs),
      wordsPerSecond: round(median(wordsPerSecond), 0),
      peakRssMiB: round(report.peakRssMiB, 0),
    };
    results.push(result);
    ctx.progress(
      `offline ${minutes} min: median ${result.wallMs.p50} ms, ${result.wordsPerSecond} words/s, peak RSS ${result.peakRssMiB} MiB`,
    );
  }
  return results;
}

export const benchmark: Benchmark = {
  name: 'stenograms',
  title: 'Private stenograms: the offline generator, and concurrent generate streams',
  description:
    'The built-in generator on generated 2-hour and 30-minute conversations (speaker changes, NAME: labels, stage directions) ' +
    `in a process of its own; ${STREAMS.streams} concurrent generate streams on one \`afterimage api\` and one \`afterimage worker\`, ` +
    "read to stenogram:complete: how many complete, time to complete, each event's delivery from its commit to its client.",
  async run(ctx) {
    const problems: string[] = [];
    const offline = PARTS.has('offline') ? await offlinePart(ctx) : null;
    const rounds = [];
    if (PARTS.has('streams')) for (const minutes of ROUND_MINUTES) rounds.push(await streamRound(ctx, minutes, problems));
    return {
      parameters: {
        parts: [...PARTS],
        offline: { sizes: SIZES, inputs: INPUTS, warmup: INPUTS },
        streams: { ...STREAMS, roundMinutes: ROUND_MINUTES },
      },
      results: { offline, rounds },
      targets: rounds.map((result) => target(`${result.label}: streams complete`, result.completed, { atLeast: result.streams })),
      ok: problems.length === 0,
      problems,
    };
  },
};
