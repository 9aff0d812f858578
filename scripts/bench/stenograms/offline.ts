import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { fakeVideoId } from '../../../test/kit/ids.ts';
import { mix32 } from '../../../test/kit/random.ts';
import { conversation } from '../lib/corpus.ts';
import type { BenchContext } from '../lib/harness.ts';
import { distribution, type Distribution, median, percentile, round } from '../lib/stats.ts';
import type { StenogramsChildMessage, StenogramsOfflineReport, StenogramsOfflineRequest } from './child.ts';
import { INPUTS_PER_SIZE, SEED, SIZES, inputOf } from './shape.ts';

const childScript = fileURLToPath(new URL('./child.ts', import.meta.url));

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

export async function offlinePart(ctx: BenchContext, problems: string[]): Promise<OfflineResult[]> {
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
