/**
 * The child process of the `stenograms` benchmark's offline part, forked once per transcript size so
 * that its peak RSS is that of a process doing nothing but writing stenograms with the built-in
 * generator (createOfflineStenogramGenerator). It is sent the transcripts, writes a few for the JIT's
 * warm-up, then times each measured one (wall clock and CPU) and reports, with a digest of each
 * stenogram (not the Markdown itself).
 */
import { createOfflineStenogramGenerator } from '../../../core/stenograms/createOfflineStenogramGenerator.ts';
import type { StenogramInput } from '../../../core/stenograms/stenogram.ts';
import { memoryOf, resetPeak } from '../lib/usage.ts';
import { answerOnce, sendToParent } from '../lib/childMessages.ts';

export interface StenogramsOfflineRequest {
  /** Generated first, results discarded: the JIT's warm-up. */
  warmup: StenogramInput[];
  /** Generated in turn until `runs` stenograms are done. */
  inputs: StenogramInput[];
  runs: number;
}

/** What a stenogram came out as; the same every time for the same input (the generator is deterministic). */
interface StenogramDigest {
  words: number;
  speakers: number;
  paragraphs: number;
  bytes: number;
  language: string;
  model: string;
}

export interface StenogramsOfflineReport {
  /** Per warm-up stenogram, in order: the first is the process's first, with nothing compiled yet. */
  warmupMs: number[];
  /** Per measured stenogram, in order. */
  wallMs: number[];
  cpuMs: number[];
  /** RSS after start-up and the transcripts arrived, before the first stenogram (MiB). */
  rssBeforeMiB: number;
  /** VmHWM after the runs; when `peakReset`, counted from just before the warm-up (start-up's own peak forgotten). */
  peakRssMiB: number;
  peakReset: boolean;
  /** One per input, from its first measured run. */
  outputs: StenogramDigest[];
  /** Whether every later run of an input gave the same Markdown as its first. */
  deterministic: boolean;
}

export type StenogramsChildMessage =
  | { type: 'ready' }
  | { type: 'report'; report: StenogramsOfflineReport }
  | { type: 'failed'; message: string };

const send = (message: StenogramsChildMessage) => sendToParent(message);

async function measure(request: StenogramsOfflineRequest): Promise<StenogramsOfflineReport> {
  const generator = createOfflineStenogramGenerator();
  const rssBeforeMiB = memoryOf(process.pid)?.rssMiB ?? Number.NaN;
  const peakReset = resetPeak();
  const warmupMs: number[] = [];
  for (const input of request.warmup) {
    const started = performance.now();
    await generator.generate(input);
    warmupMs.push(performance.now() - started);
  }
  const outputs: StenogramDigest[] = [];
  const markdowns: string[] = [];
  let deterministic = true;
  const wallMs: number[] = [];
  const cpuMs: number[] = [];
  for (let run = 0; run < request.runs; run++) {
    const index = run % request.inputs.length;
    const cpu = process.cpuUsage();
    const started = performance.now();
    const stenogram = await generator.generate(request.inputs[index]!);
    wallMs.push(performance.now() - started);
    const used = process.cpuUsage(cpu);
    cpuMs.push((used.user + used.system) / 1000);
    if (run < request.inputs.length) {
      markdowns.push(stenogram.markdown);
      outputs.push({
        words: stenogram.words,
        speakers: stenogram.speakers,
        paragraphs: stenogram.paragraphs,
        bytes: Buffer.byteLength(stenogram.markdown),
        language: stenogram.language,
        model: stenogram.llmModel,
      });
    } else if (stenogram.markdown !== markdowns[index]) deterministic = false;
  }
  return {
    warmupMs,
    wallMs,
    cpuMs,
    rssBeforeMiB,
    peakRssMiB: memoryOf(process.pid)?.peakMiB ?? Number.NaN,
    peakReset,
    outputs,
    deterministic,
  };
}

answerOnce('report', (request: StenogramsOfflineRequest) => measure(request));
void send({ type: 'ready' });
