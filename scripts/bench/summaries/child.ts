/**
 * The child processes of the `summaries` benchmark, forked by it so that what they measure is theirs
 * alone: `offline` summarises the transcripts it is sent with the built-in generator, one process per
 * transcript size, so its peak RSS is that of a process doing nothing else; `openai` runs the
 * OpenAI-compatible stand-in (test/kit/servers/openai-server.ts), so its CPU time (read from /proc by
 * the parent) is the model's side of each call, apart from the service's.
 */
import { createExtractiveGenerator } from '../../../core/summaries/offline/createExtractiveGenerator.ts';
import type { GeneratedSummary, SummaryInput } from '../../../core/summaries/summary.ts';
import { start } from '../../../test/kit/servers/openai-server.ts';
import { memoryOf, resetPeak } from '../lib/usage.ts';
import { answerOnce, sendToParent } from '../lib/childMessages.ts';

export interface OfflineRequest {
  /** Summarised first, results discarded: the JIT's warm-up. */
  warmup: SummaryInput[];
  /** Summarised in turn until `runs` summaries are done. */
  inputs: SummaryInput[];
  runs: number;
}

export interface OfflineReport {
  /** Per measured summary, in order. */
  wallMs: number[];
  cpuMs: number[];
  /** RSS after start-up and the transcripts arrived, before the first summary (MiB). */
  rssBeforeMiB: number;
  /** VmHWM after the runs; when `peakReset`, counted from just before the warm-up (start-up's own peak forgotten). */
  peakRssMiB: number;
  peakReset: boolean;
  heapUsedBeforeMiB: number;
  /** The summary of each input (the same every time: the generator is deterministic). */
  outputs: GeneratedSummary[];
}

export type ChildMessage =
  | { type: 'ready'; url?: string }
  | { type: 'offline'; report: OfflineReport }
  | { type: 'failed'; message: string };

const send = (message: ChildMessage) => sendToParent(message);
const mib = (bytes: number) => bytes / 2 ** 20;

async function offline(request: OfflineRequest): Promise<OfflineReport> {
  const generator = createExtractiveGenerator();
  const rssBeforeMiB = memoryOf(process.pid)?.rssMiB ?? Number.NaN;
  const heapUsedBeforeMiB = mib(process.memoryUsage().heapUsed);
  const peakReset = resetPeak();
  for (const input of request.warmup) await generator.summarise(input);
  const outputs: GeneratedSummary[] = [];
  const wallMs: number[] = [];
  const cpuMs: number[] = [];
  for (let run = 0; run < request.runs; run++) {
    const input = request.inputs[run % request.inputs.length]!;
    const cpu = process.cpuUsage();
    const started = performance.now();
    const summary = await generator.summarise(input);
    wallMs.push(performance.now() - started);
    const used = process.cpuUsage(cpu);
    cpuMs.push((used.user + used.system) / 1000);
    if (run < request.inputs.length) outputs.push(summary);
  }
  return { wallMs, cpuMs, rssBeforeMiB, peakRssMiB: memoryOf(process.pid)?.peakMiB ?? Number.NaN, peakReset, heapUsedBeforeMiB, outputs };
}

async function main(role: string | undefined): Promise<void> {
  if (role === 'openai') {
    const server = await start({ latencyMs: 0 });
    process.once('disconnect', () => void server.close().then(() => process.exit(0)));
    await send({ type: 'ready', url: server.url });
    return;
  }
  if (role !== 'offline') throw new Error(`unknown role ${role}; expected offline or openai`);
  answerOnce('offline', (request: OfflineRequest) => offline(request));
  await send({ type: 'ready' });
}

main(process.argv[2]).catch(async (error: unknown) => {
  await send({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.exit(1);
});
