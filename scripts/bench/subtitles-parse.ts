/**
 * Throughput of reading YouTube auto captions: parse (format sniffing, WebVTT codec) and
 * normaliseCues (roll-up removal) on one core, in MB of UTF-8 input per second. The input is
 * generated here, in the shape yt-dlp downloads: each cue repeats the previous line and adds one
 * with <c> word timings, a 10 ms transition cue between. Target: at least 30 MB/s.
 *
 * Run with the others (`npm run bench -- subtitles-parse`) or alone
 * (`node --import tsx scripts/bench/subtitles-parse.ts [MB]`).
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { normaliseCues } from '../../core/subtitles/normaliseCues.ts';
import { parse } from '../../core/subtitles/parse.ts';
import { parseVtt } from '../../core/subtitles/parseVtt.ts';
import { rollingCaptions } from './lib/corpus.ts';
import { type Benchmark, type BenchOutcome, target } from './lib/harness.ts';
import { median, round, secondsSince } from './lib/stats.ts';

const TARGET_MB_PER_S = 30;
const DEFAULT_MB = 32;
const RUNS = 5;

/** CPU seconds of this process since `started` (process.cpuUsage()): what the work cost one core, however busy the machine. */
const cpuSeconds = (started: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(started);
  return (used.user + used.system) / 1e6;
};

export interface SubtitlesParseResult {
  inputMB: number;
  cues: number;
  /** parse + normalise (what `afterimage subtitles convert` does before rendering), MB/s of wall time per run */
  parseAndNormaliseMBps: number[];
  medianMBps: number;
  bestMBps: number;
  /** the same per CPU second of the process: unaffected by other processes taking the core */
  cpuMBps: number[];
  medianCpuMBps: number;
  /** the WebVTT codec alone and normaliseCues alone, median MB per CPU second of the same input */
  codecMBps: number;
  normaliseMBps: number;
  wordsSpoken: number;
  wordsOut: number;
}

/** Measures; the numbers, for run.ts or a caller of its own. */
export function run(megabytes = DEFAULT_MB, progress: (message: string) => void = () => undefined): SubtitlesParseResult {
  const { text, words } = rollingCaptions(megabytes);
  const inputMB = Buffer.byteLength(text, 'utf8') / 1_000_000;
  progress(`generated ${round(inputMB, 1)!} MB of rolling auto-caption WebVTT (${words} words)`);
  parse(rollingCaptions(2, 2).text); // warm-up: let the JIT see the code first

  const rates: number[] = [];
  const cpuRates: number[] = [];
  let cues = 0;
  let wordsOut = 0;
  for (let i = 0; i < RUNS; i++) {
    const cpu = process.cpuUsage();
    const started = performance.now();
    const result = parse(text, 'vtt');
    rates.push(inputMB / secondsSince(started));
    cpuRates.push(inputMB / cpuSeconds(cpu));
    cues = result.length;
    wordsOut = result.reduce((sum, cue) => sum + cue.text.split(' ').filter((word) => word !== '>>').length, 0);
  }
  const codec: number[] = [];
  const normalise: number[] = [];
  for (let i = 0; i < 3; i++) {
    let started = process.cpuUsage();
    const raw = parseVtt(text);
    codec.push(inputMB / cpuSeconds(started));
    started = process.cpuUsage();
    normaliseCues(raw);
    normalise.push(inputMB / cpuSeconds(started));
  }
  return {
    inputMB: round(inputMB, 1)!,
    cues,
    parseAndNormaliseMBps: rates.map((rate) => round(rate, 1)!),
    medianMBps: round(median(rates), 1)!,
    bestMBps: round(Math.max(...rates), 1)!,
    cpuMBps: cpuRates.map((rate) => round(rate, 1)!),
    medianCpuMBps: round(median(cpuRates), 1)!,
    codecMBps: round(median(codec), 1)!,
    normaliseMBps: round(median(normalise), 1)!,
    wordsSpoken: words,
    wordsOut,
  };
}

function outcome(result: SubtitlesParseResult): BenchOutcome {
  const problems: string[] = [];
  // ">>" markers become speaker changes and leave the text; every other word must come out once.
  if (result.wordsOut !== result.wordsSpoken)
    problems.push(`normalised text has ${result.wordsOut} words, ${result.wordsSpoken} were spoken`);
  // Judged per CPU second: wall time on a shared machine says more about the neighbours.
  if (result.medianCpuMBps < TARGET_MB_PER_S)
    problems.push(`median ${result.medianCpuMBps} MB per CPU second is below the ${TARGET_MB_PER_S} MB/s target`);
  return {
    parameters: { inputMB: result.inputMB, runs: RUNS, targetMBps: TARGET_MB_PER_S },
    results: result,
    targets: [target('parse + normalise, MB per CPU second (median)', result.medianCpuMBps, { atLeast: TARGET_MB_PER_S })],
    ok: problems.length === 0,
    problems,
  };
}

export const benchmark: Benchmark = {
  name: 'subtitles-parse',
  title: 'Parsing and normalising auto captions',
  description:
    'parse() (format sniffing + WebVTT codec) and normaliseCues (roll-up removal) on generated YouTube-style rolling auto-caption WebVTT ' +
    '(<c> word timings, 10 ms transition cues), in MB of input per second on one core; median of 5 runs after a warm-up.',
  async run(ctx) {
    return outcome(run(DEFAULT_MB, ctx.progress));
  },
};

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const megabytes = Number(process.argv[2] ?? DEFAULT_MB);
  const result = outcome(run(megabytes, (message) => process.stdout.write(`${message}\n`)));
  process.stdout.write(`${JSON.stringify(result.results, null, 2)}\n${result.ok ? 'ok' : `FAILED: ${result.problems.join('; ')}`}\n`);
  process.exitCode = result.ok ? 0 : 1;
}
