/** parse() and normaliseCues (roll-up removal) of yt-dlp-style rolling auto-caption WebVTT, in MB of input per CPU second. */
import { parse } from '../../core/subtitles/parse.ts';
import { rollingCaptions } from './lib/corpus.ts';
import { type Benchmark, target } from './lib/harness.ts';
import { numberKnob } from './lib/knobs.ts';
import { median, round, secondsSince } from './lib/stats.ts';

const MEGABYTES = numberKnob('SUBTITLES_PARSE_MB', 32);
const RUNS = 5;
const TARGET_MB_PER_CPU_SECOND = 30;

export const benchmark: Benchmark = {
  name: 'subtitles-parse',
  title: 'Parsing and normalising auto captions',
  description:
    'parse() (format sniffing + WebVTT codec) and normaliseCues on generated rolling auto-caption WebVTT (<c> word timings, 10 ms transition cues), ' +
    `MB of input per second on one core, median of ${RUNS} runs after a warm-up; judged per CPU second, as wall time on a shared machine measures the neighbours.`,
  async run(ctx) {
    const text = rollingCaptions(MEGABYTES);
    const inputMB = Buffer.byteLength(text, 'utf8') / 1e6;
    ctx.progress(`${round(inputMB, 1)} MB of rolling auto-caption WebVTT`);
    parse(rollingCaptions(2, 2)); // the JIT sees the code first
    const wall: number[] = [];
    const cpu: number[] = [];
    let cues = 0;
    for (let i = 0; i < RUNS; i++) {
      const cpuStart = process.cpuUsage();
      const started = performance.now();
      cues = parse(text, 'vtt').length;
      wall.push(inputMB / secondsSince(started));
      const used = process.cpuUsage(cpuStart);
      cpu.push(inputMB / ((used.user + used.system) / 1e6));
    }
    const medianCpuMBps = round(median(cpu), 1);
    return {
      parameters: { inputMB: round(inputMB, 1), runs: RUNS },
      results: { cues, medianCpuMBps, medianWallMBps: round(median(wall), 1), cpuMBps: cpu.map((rate) => round(rate, 1)) },
      targets: [target('parse + normalise, MB per CPU second (median)', medianCpuMBps, { atLeast: TARGET_MB_PER_CPU_SECOND })],
      ok: true,
      problems: [],
    };
  },
};
