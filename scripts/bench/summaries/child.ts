/**
 * A child process of `summaries` and `stenograms`, so that what it measures is its own: `summaries` or
 * `stenograms` times the built-in generator on the transcripts it is sent (its peak RSS is then that of a
 * process doing nothing else); `openai` runs the OpenAI-compatible stand-in, whose CPU is the "model's".
 */
import { createOfflineStenogramGenerator } from '../../../core/stenograms/createOfflineStenogramGenerator.ts';
import type { StenogramInput } from '../../../core/stenograms/stenogram.ts';
import { createExtractiveGenerator } from '../../../core/summaries/offline/createExtractiveGenerator.ts';
import type { SummaryInput } from '../../../core/summaries/summary.ts';
import { start } from '../../../test/kit/servers/openai-server.ts';
import { answerOnce, sendToParent } from '../lib/childMessages.ts';
import { memoryOf, resetPeak } from '../lib/usage.ts';

/** `warmup` is generated first and thrown away (the JIT's warm-up), then `inputs` in turn until `runs` are done. */
export interface OfflineRequest<Input> {
  warmup: Input[];
  inputs: Input[];
  runs: number;
}

/** Per run, wall and CPU time; the peak RSS since the warm-up began. */
export interface OfflineReport {
  wallMs: number[];
  cpuMs: number[];
  peakRssMiB: number;
}

async function timeRuns<Input>(generate: (input: Input) => Promise<unknown>, request: OfflineRequest<Input>) {
  resetPeak();
  for (const input of request.warmup) await generate(input);
  const report: OfflineReport = { wallMs: [], cpuMs: [], peakRssMiB: 0 };
  for (let run = 0; run < request.runs; run++) {
    const cpu = process.cpuUsage();
    const started = performance.now();
    await generate(request.inputs[run % request.inputs.length]!);
    report.wallMs.push(performance.now() - started);
    const used = process.cpuUsage(cpu);
    report.cpuMs.push((used.user + used.system) / 1000);
  }
  report.peakRssMiB = memoryOf(process.pid)?.peakMiB ?? Number.NaN;
  return report;
}

const role = process.argv[2];
if (role === 'openai') {
  const server = await start({ latencyMs: 0 });
  process.once('disconnect', () => void server.close().then(() => process.exit(0)));
  await sendToParent({ type: 'ready', url: server.url });
} else if (role === 'summaries') {
  const generator = createExtractiveGenerator();
  answerOnce('report', (request: OfflineRequest<SummaryInput>) => timeRuns((input) => generator.summarise(input), request));
  await sendToParent({ type: 'ready' });
} else if (role === 'stenograms') {
  const generator = createOfflineStenogramGenerator();
  answerOnce('report', (request: OfflineRequest<StenogramInput>) => timeRuns((input) => generator.generate(input), request));
  await sendToParent({ type: 'ready' });
} else throw new Error(`unknown role ${role}; expected summaries, stenograms or openai`);
