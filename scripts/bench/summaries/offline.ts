import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { GeneratedSummary, SummaryInput } from '../../../core/summaries/summary.ts';
import { corpusVideoId } from '../../../test/kit/corpus.ts';
import { mix32 } from '../../../test/kit/random.ts';
import { talkTranscript } from '../lib/corpus.ts';
import type { BenchContext } from '../lib/harness.ts';
import { median, percentile, round } from '../lib/stats.ts';
import { cpuDelta, cpuOf, cpuSnapshot } from '../lib/usage.ts';
import type { ChildMessage, OfflineReport, OfflineRequest } from './child.ts';
import { SEED, SPECS, TRANSCRIPTS_PER_SIZE, WARMUP_SUMMARIES, ms, type TranscriptSpec } from './shape.ts';

const childScript = fileURLToPath(new URL('./child.ts', import.meta.url));
export interface TranscriptSet {
  spec: TranscriptSpec;
  inputs: SummaryInput[];
  warmup: SummaryInput[];
  words: number;
  cues: number;
}

export function transcriptSets(words: string[]): TranscriptSet[] {
  return SPECS.map((spec, specIndex) => {
    const make = (index: number): { input: SummaryInput; words: number } => {
      const made = talkTranscript(words, spec.minutes, spec.style, mix32(SEED + specIndex, index));
      // Auto captions often come without a video title given to the generator; manual ones with.
      const title = spec.style === 'manual' ? `Bench talk ${index}` : null;
      return {
        input: { videoId: corpusVideoId(SEED + 100 + specIndex, index), title, language: 'en', cues: made.cues },
        words: made.words,
      };
    };
    const measured = Array.from({ length: TRANSCRIPTS_PER_SIZE }, (_, index) => make(index));
    const warmup = Array.from({ length: WARMUP_SUMMARIES }, (_, index) => make(1000 + index).input);
    return {
      spec,
      inputs: measured.map((m) => m.input),
      warmup,
      words: Math.round(measured.reduce((sum, m) => sum + m.words, 0) / measured.length),
      cues: Math.round(measured.reduce((sum, m) => sum + m.input.cues.length, 0) / measured.length),
    };
  });
}

// ---------------------------------------------------------------------------------------------------
// Child processes (scripts/bench/summaries/child.ts)

interface Child {
  child: ChildProcess;
  next(): Promise<ChildMessage>;
}

/** Forks the child script in `role` and waits for its 'ready'. */
export async function forkChild(role: 'offline' | 'openai'): Promise<Child & { ready: ChildMessage & { type: 'ready' } }> {
  const child = fork(childScript, [role], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const inbox: ChildMessage[] = [];
  const waiting: Array<(message: ChildMessage) => void> = [];
  let exit: string | undefined;
  child.on('message', (message: ChildMessage) => {
    const waiter = waiting.shift();
    if (waiter) waiter(message);
    else inbox.push(message);
  });
  child.once('exit', (code, signal) => {
    exit = `exited (${signal ?? code})`;
    // Its last message may still be on its way.
    setTimeout(() => waiting.splice(0).forEach((waiter) => waiter({ type: 'failed', message: `the ${role} child ${exit}` })), 1_000);
  });
  const next = () =>
    new Promise<ChildMessage>((resolve) => {
      const queued = inbox.shift();
      if (queued) resolve(queued);
      else if (exit) resolve({ type: 'failed', message: `the ${role} child ${exit}` });
      else waiting.push(resolve);
    });
  const ready = await next();
  if (ready.type !== 'ready') throw new Error(`the ${role} child failed to start: ${ready.type === 'failed' ? ready.message : ready.type}`);
  return { child, next, ready };
}

// ---------------------------------------------------------------------------------------------------
// Part 1: the offline generator

interface OfflineResult {
  id: string;
  label: string;
  words: number;
  cues: number;
  runs: number;
  medianMs: number | null;
  p95Ms: number | null;
  maxMs: number | null;
  medianCpuMs: number | null;
  summariesPerSecond: number | null;
  rssBeforeMiB: number | null;
  peakRssMiB: number | null;
  peakAboveStartMiB: number | null;
  peakReset: boolean;
  /** Cores busy with anything but the child and this process meanwhile: a disturbance gauge. */
  otherCores: number | null;
  keyPoints: number;
  tags: string[];
  detailedChars: number;
  language: string;
}

export async function measureOffline(
  ctx: BenchContext,
  sets: TranscriptSet[],
): Promise<{ results: OfflineResult[]; outputs: GeneratedSummary[] }> {
  const results: OfflineResult[] = [];
  const outputs: GeneratedSummary[] = [];
  for (const set of sets) {
    const { child, next } = await forkChild('offline');
    const request: OfflineRequest = { warmup: set.warmup, inputs: set.inputs, runs: set.spec.runs };
    const machineBefore = cpuSnapshot();
    const childBefore = cpuOf(child.pid!);
    child.send(request);
    const message = await next();
    const machine = cpuDelta(machineBefore, cpuSnapshot());
    const childUs = (cpuOf(child.pid!) ?? Number.NaN) - (childBefore ?? Number.NaN);
    if (message.type !== 'offline')
      throw new Error(`offline ${set.spec.id}: ${message.type === 'failed' ? message.message : message.type}`);
    const report: OfflineReport = message.report;
    const wall = [...report.wallMs].sort((a, b) => a - b);
    const first = report.outputs[0]!;
    const result: OfflineResult = {
      id: set.spec.id,
      label: set.spec.label,
      words: set.words,
      cues: set.cues,
      runs: wall.length,
      medianMs: ms(median(wall)),
      p95Ms: ms(percentile(wall, 95)),
      maxMs: ms(wall[wall.length - 1]!),
      medianCpuMs: ms(median(report.cpuMs)),
      summariesPerSecond: round(1000 / (wall.reduce((sum, value) => sum + value, 0) / wall.length), 1),
      rssBeforeMiB: round(report.rssBeforeMiB, 0),
      peakRssMiB: round(report.peakRssMiB, 0),
      peakAboveStartMiB: round(report.peakRssMiB - report.rssBeforeMiB, 0),
      peakReset: report.peakReset,
      otherCores:
        machine.machineBusyUs === null || !Number.isFinite(childUs)
          ? null
          : round(Math.max(0, machine.machineBusyUs - childUs - machine.selfUs) / (machine.seconds * 1e6), 2),
      keyPoints: first.keyPoints.length,
      tags: first.tags,
      detailedChars: first.detailedSummary.length,
      language: first.language,
    };
    results.push(result);
    outputs.push(...report.outputs);
    ctx.progress(
      `offline ${set.spec.id}: ${set.words} words, ${set.cues} cues; median ${result.medianMs} ms, p95 ${result.p95Ms} ms, peak RSS ${result.peakRssMiB} MiB (${result.rssBeforeMiB} before)`,
    );
    await new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())));
  }
  return { results, outputs };
}

// ---------------------------------------------------------------------------------------------------
// Part 2: the LLM path's own overhead
