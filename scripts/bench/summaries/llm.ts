import { zodResponseFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { createLlmClient } from '../../../core/llm/openaiClient.ts';
import type { JsonRequest, LlmClient } from '../../../core/llm/types.ts';
import { chunkLines, transcriptLines } from '../../../core/llm/chunkTranscript.ts';
import { createLlmSummaryGenerator } from '../../../core/summaries/llmSummariser.ts';
import { summaryContent } from '../../../core/summaries/summary.ts';
import type { BenchContext } from '../lib/harness.ts';
import { median, percentile, round } from '../lib/stats.ts';
import { cpuOf } from '../lib/usage.ts';
import { forkChild, type TranscriptSet } from './offline.ts';
import { CHUNK_BUDGET, LLM, LLM_RUNS, MICRO_ITERATIONS, ms } from './shape.ts';

/** The client, counting calls and the time with no call in flight (the summariser's own work between calls). */
function observedClient(client: LlmClient) {
  let inFlight = 0;
  let idleSince = performance.now();
  const stats = { calls: 0, callMs: 0, idleMs: 0, maxInFlight: 0 };
  return {
    stats,
    reset() {
      Object.assign(stats, { calls: 0, callMs: 0, idleMs: 0, maxInFlight: 0 });
      idleSince = performance.now();
    },
    /** Closes the idle interval running at the end of a summary. */
    finish() {
      if (inFlight === 0) stats.idleMs += performance.now() - idleSince;
      idleSince = performance.now();
    },
    client: {
      model: client.model,
      contextTokens: client.contextTokens,
      async completeJson<S extends z.ZodType>(request: JsonRequest<S>) {
        if (inFlight === 0) stats.idleMs += performance.now() - idleSince;
        inFlight++;
        stats.calls++;
        stats.maxInFlight = Math.max(stats.maxInFlight, inFlight);
        const started = performance.now();
        try {
          return await client.completeJson(request);
        } finally {
          stats.callMs += performance.now() - started;
          inFlight--;
          if (inFlight === 0) idleSince = performance.now();
        }
      },
    } satisfies LlmClient,
  };
}

interface LlmResult {
  id: string;
  label: string;
  words: number;
  runs: number;
  calls: number;
  maxInFlight: number;
  medianMs: number | null;
  p95Ms: number | null;
  /** Wall time with no call in flight: chunking, prompts, combining, checking, on the critical path. */
  ownMs: number | null;
  /** CPU time of this process per summary: everything the service does, SDK and HTTP client included. */
  serviceCpuMs: number | null;
  /** CPU time of the stand-in process per summary: the "model". */
  standInCpuMs: number | null;
  promptTokens: number;
  completionTokens: number;
  requestKiB: number | null;
}

interface MinimalCall {
  ms: number | null;
  cpuUs: number | null;
  standInCpuUs: number | null;
}
interface MinimalCalls {
  viaClient: MinimalCall;
  bare: MinimalCall;
}

interface MicroResult {
  id: string;
  label: string;
  medianUs: number | null;
  perSummaryMs: number | null;
}

/** Median µs of `fn` over MICRO_ITERATIONS calls after a warm-up. */
function timeMicro(fn: () => unknown, iterations = MICRO_ITERATIONS): number {
  for (let i = 0; i < Math.min(20, iterations); i++) fn();
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const started = performance.now();
    fn();
    samples.push((performance.now() - started) * 1000);
  }
  return median(samples);
}

export async function measureLlm(
  ctx: BenchContext,
  sets: TranscriptSet[],
): Promise<{ results: LlmResult[]; micro: MicroResult[]; minimalCalls: MinimalCalls }> {
  const { child, ready } = await forkChild('openai');
  const pid = child.pid!;
  try {
    const client = createLlmClient({
      baseUrl: ready.url!,
      model: LLM.model,
      contextTokens: LLM.contextTokens,
      concurrency: LLM.concurrency,
      timeoutMs: 60_000,
      retries: 0,
      log: ctx.log,
    });
    const observed = observedClient(client);
    const generator = createLlmSummaryGenerator(observed.client);
    const results: LlmResult[] = [];
    for (const set of sets.filter((candidate) => LLM_RUNS[candidate.spec.id] !== undefined)) {
      const runs = LLM_RUNS[set.spec.id]!;
      for (const input of set.warmup) await generator.summarise(input);
      const wall: number[] = [];
      const calls: number[] = [];
      let own = 0;
      let maxInFlight = 0;
      let tokens = { prompt: 0, completion: 0 };
      const cpu = process.cpuUsage();
      const standInBefore = cpuOf(pid);
      for (let run = 0; run < runs; run++) {
        const input = set.inputs[run % set.inputs.length]!;
        observed.reset();
        const started = performance.now();
        const summary = await generator.summarise(input);
        wall.push(performance.now() - started);
        observed.finish();
        own += observed.stats.idleMs;
        calls.push(observed.stats.calls);
        maxInFlight = Math.max(maxInFlight, observed.stats.maxInFlight);
        if (run === 0) tokens = summary.tokensUsed ?? tokens;
      }
      const used = process.cpuUsage(cpu);
      const standInAfter = cpuOf(pid);
      const sorted = [...wall].sort((a, b) => a - b);
      const result: LlmResult = {
        id: set.spec.id,
        label: set.spec.label,
        words: set.words,
        runs,
        calls: Math.round(median(calls)),
        maxInFlight,
        medianMs: ms(median(sorted)),
        p95Ms: ms(percentile(sorted, 95)),
        ownMs: ms(own / runs, 2),
        serviceCpuMs: ms((used.user + used.system) / 1000 / runs),
        standInCpuMs: standInBefore === undefined || standInAfter === undefined ? null : ms((standInAfter - standInBefore) / 1000 / runs),
        promptTokens: tokens.prompt,
        completionTokens: tokens.completion,
        // What goes over the wire: the prompts, at the stand-in's 4 characters a token.
        requestKiB: round((tokens.prompt * 4) / 1024, 0),
      };
      results.push(result);
      ctx.progress(
        `llm ${set.spec.id}: ${result.calls} calls, median ${result.medianMs} ms, own ${result.ownMs} ms, service CPU ${result.serviceCpuMs} ms, stand-in CPU ${result.standInCpuMs} ms per summary`,
      );
    }

    // The smallest call, a one-field schema and a one-line prompt: through the client (SDK, limiter,
    // retries, check), and as one bare fetch of the same request, for what the client layer costs.
    const ping = z.object({ word: z.string() });
    const minimal = async (call: () => Promise<unknown>) => {
      const latencies: number[] = [];
      let cpuUs = 0;
      let standInUs = 0;
      for (let i = 0; i < 220; i++) {
        const cpu = process.cpuUsage();
        const standIn = cpuOf(pid) ?? 0;
        const started = performance.now();
        await call();
        if (i < 20) continue;
        latencies.push(performance.now() - started);
        const used = process.cpuUsage(cpu);
        cpuUs += used.user + used.system;
        standInUs += (cpuOf(pid) ?? 0) - standIn;
      }
      return {
        ms: ms(median(latencies), 3),
        cpuUs: round(cpuUs / latencies.length, 0),
        standInCpuUs: round(standInUs / latencies.length, 0),
      };
    };
    const viaClient = await minimal(() =>
      client.completeJson({ system: 'Answer with JSON.', user: '[0] hello', schema: ping, schemaName: 'ping' }),
    );
    const body = JSON.stringify({
      model: LLM.model,
      messages: [
        { role: 'system', content: 'Answer with JSON.' },
        { role: 'user', content: '[0] hello' },
      ],
      response_format: { type: 'json_schema', json_schema: zodResponseFormat(ping, 'ping').json_schema },
    });
    const bare = await minimal(async () => {
      const response = await fetch(`${ready.url!}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      const answer = (await response.json()) as { choices: Array<{ message: { content: string } }> };
      return ping.parse(JSON.parse(answer.choices[0]!.message.content));
    });
    const minimalCalls = { viaClient, bare };

    // The service's pure pieces, alone.
    const micro: MicroResult[] = [];
    for (const set of sets.filter((candidate) => LLM_RUNS[candidate.spec.id] !== undefined)) {
      const input = set.inputs[0]!;
      const lines = transcriptLines(input.cues);
      // About what 8192 tokens leave for a chunk's transcript once the answer, prompt and schema are counted.
      const chunking = timeMicro(() => chunkLines(transcriptLines(input.cues), CHUNK_BUDGET), 50);
      const chunks = chunkLines(lines, CHUNK_BUDGET).length;
      micro.push({
        id: `lines-chunks-${set.spec.id}`,
        label: `transcriptLines + chunkLines (~${CHUNK_BUDGET} tokens a chunk), ${set.spec.label}: ${lines.length} lines, ${chunks} chunks`,
        medianUs: round(chunking, 0),
        perSummaryMs: ms(chunking / 1000, 2),
      });
    }
    const sample = {
      title: 'A title',
      tldr: 'Two sentences. Or three.',
      keyPoints: Array.from({ length: 12 }, (_, i) => ({
        text: `Point ${i} made at length, a sentence or two of it.`,
        startSeconds: i * 60,
      })),
      detailedSummary: 'Paragraph.\n\nParagraph.',
      tags: ['one', 'two', 'three'],
      language: 'en',
    };
    const schemaFormat = timeMicro(() => zodResponseFormat(summaryContent, 'video_summary'));
    const jsonSchema = timeMicro(() => z.toJSONSchema(summaryContent));
    const validation = timeMicro(() => summaryContent.safeParse(JSON.parse(JSON.stringify(sample))));
    const calls2h = results.find((result) => result.id === 'auto-2h')?.calls ?? null;
    const perCall = (us: number) => (calls2h === null ? null : ms((us * calls2h) / 1000, 2));
    micro.push({
      id: 'zod-response-format',
      label: `zodResponseFormat(summary schema): the json_schema sent with every call (per summary: × ${calls2h} calls of a 2 h one)`,
      medianUs: round(schemaFormat, 0),
      perSummaryMs: perCall(schemaFormat),
    });
    micro.push({
      id: 'to-json-schema',
      label: `z.toJSONSchema(summary schema) (× ${calls2h} calls)`,
      medianUs: round(jsonSchema, 0),
      perSummaryMs: perCall(jsonSchema),
    });
    micro.push({
      id: 'validate-answer',
      label: `JSON.parse + summaryContent.safeParse of a 12-point answer (× ${calls2h} calls)`,
      medianUs: round(validation, 0),
      perSummaryMs: perCall(validation),
    });
    return { results, micro, minimalCalls };
  } finally {
    child.disconnect();
    await new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())));
  }
}

// ---------------------------------------------------------------------------------------------------
// Part 3: reading at scale — the database
