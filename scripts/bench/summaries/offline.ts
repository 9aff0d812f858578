import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { createLlmClient } from '../../../core/llm/openaiClient.ts';
import type { LlmClient } from '../../../core/llm/types.ts';
import { createLlmSummaryGenerator } from '../../../core/summaries/llmSummariser.ts';
import type { SummaryInput } from '../../../core/summaries/summary.ts';
import { corpusVideoId } from '../../../test/kit/corpus.ts';
import { mix32 } from '../../../test/kit/random.ts';
import { talkTranscript } from '../lib/corpus.ts';
import { type BenchContext, sleep } from '../lib/harness.ts';
import { distribution, round } from '../lib/stats.ts';
import { cpuOf } from '../lib/usage.ts';
import type { OfflineReport, OfflineRequest } from './child.ts';

const SEED = 1;
const WARMUP = 3;
const TRANSCRIPTS = 4;
export const SPECS = [
  { id: 'auto-30min', minutes: 30, style: 'auto', runs: 40, llmRuns: 30 },
  { id: 'manual-30min', minutes: 30, style: 'manual', runs: 40, llmRuns: 0 },
  { id: 'auto-2h', minutes: 120, style: 'auto', runs: 16, llmRuns: 12 },
] as const;
export const LLM = { model: 'bench-stand-in', contextTokens: 8192, concurrency: 2 }; // LLM_CONCURRENCY's default

type ChildMessage = { type: 'ready'; url?: string } | { type: 'report'; report: OfflineReport } | { type: 'failed'; message: string };

/** Forks child.ts in `role` and waits until it is ready; `next()` waits for its next message. */
async function forkChild(role: 'summaries' | 'stenograms' | 'openai') {
  const script = fileURLToPath(new URL('./child.ts', import.meta.url));
  const child = fork(script, [role], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  // Its last message may still be on its way when it exits.
  const exited = once(child, 'exit').then(async ([code, signal]) => {
    await sleep(1_000);
    return { type: 'failed', message: `the ${role} child exited (${signal ?? code})` } as const;
  });
  const next = () => Promise.race([once(child, 'message').then(([message]) => message as ChildMessage), exited]);
  const ready = await next();
  if (ready.type !== 'ready') throw new Error(`the ${role} child did not start: ${ready.type === 'failed' ? ready.message : ready.type}`);
  return { child, url: ready.url, next };
}

/** Runs the offline generator of `role` in a child process of its own on `request`. */
export async function timeOffline<Input>(role: 'summaries' | 'stenograms', request: OfflineRequest<Input>) {
  const { child, next } = await forkChild(role);
  child.send(request);
  const message = await next();
  if (message.type !== 'report') throw new Error(`the ${role} child: ${message.type === 'failed' ? message.message : message.type}`);
  return message.report;
}

export type TranscriptSet = ReturnType<typeof transcriptSets>[number];

/** Per spec, TRANSCRIPTS measured talks and WARMUP others; auto captions come without a title, as they often do. */
export function transcriptSets(words: string[]) {
  return SPECS.map((spec, specIndex) => {
    const make = (index: number): SummaryInput => ({
      videoId: corpusVideoId(SEED + 100 + specIndex, index),
      title: spec.style === 'manual' ? `Bench talk ${index}` : null,
      language: 'en',
      cues: talkTranscript(words, spec.minutes, spec.style, mix32(SEED + specIndex, index)).cues,
    });
    const inputs = Array.from({ length: TRANSCRIPTS }, (_, index) => make(index));
    const warmup = Array.from({ length: WARMUP }, (_, index) => make(1000 + index));
    return { spec, inputs, warmup };
  });
}

export async function measureOffline(ctx: BenchContext, sets: TranscriptSet[]) {
  const results = [];
  for (const { spec, inputs, warmup } of sets) {
    const report = await timeOffline('summaries', { warmup, inputs, runs: spec.runs });
    const result = {
      id: spec.id,
      wallMs: distribution(report.wallMs),
      cpuMs: distribution(report.cpuMs),
      peakRssMiB: round(report.peakRssMiB, 0),
    };
    results.push(result);
    ctx.progress(`offline ${spec.id}: median ${result.wallMs.p50} ms, p95 ${result.wallMs.p95} ms, peak RSS ${result.peakRssMiB} MiB`);
  }
  return results;
}

/**
 * The LLM path against the stand-in answering at once in its own process: what the service adds to a
 * summary beyond the model's time (chunking, prompts, schema, SDK, HTTP, validation), as its own CPU.
 */
export async function measureLlm(ctx: BenchContext, sets: TranscriptSet[]) {
  const { child, url } = await forkChild('openai');
  try {
    const client = createLlmClient({ ...LLM, baseUrl: url!, timeoutMs: 60_000, retries: 0, log: ctx.log });
    let calls = 0;
    const counting: LlmClient = {
      ...client,
      completeJson(request) {
        calls++;
        return client.completeJson(request);
      },
    };
    const generator = createLlmSummaryGenerator(counting);
    const results = [];
    for (const { spec, inputs, warmup } of sets.filter((set) => set.spec.llmRuns > 0)) {
      for (const input of warmup) await generator.summarise(input);
      calls = 0;
      const wall: number[] = [];
      const cpu = process.cpuUsage();
      const standInBefore = cpuOf(child.pid!) ?? Number.NaN;
      for (let run = 0; run < spec.llmRuns; run++) {
        const started = performance.now();
        await generator.summarise(inputs[run % inputs.length]!);
        wall.push(performance.now() - started);
      }
      const used = process.cpuUsage(cpu);
      const result = {
        id: spec.id,
        runs: spec.llmRuns,
        callsPerSummary: round(calls / spec.llmRuns, 1),
        wallMs: distribution(wall),
        serviceCpuMs: round((used.user + used.system) / 1000 / spec.llmRuns, 1),
        standInCpuMs: round(((cpuOf(child.pid!) ?? Number.NaN) - standInBefore) / 1000 / spec.llmRuns, 1),
      };
      results.push(result);
      ctx.progress(`llm ${spec.id}: ${result.callsPerSummary} calls, service CPU ${result.serviceCpuMs} ms a summary`);
    }
    return results;
  } finally {
    child.disconnect();
  }
}
