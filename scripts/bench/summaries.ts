/**
 * AI summaries (issue 14), three parts:
 *   offline  the built-in extractive generator (afterimage-extractive-1) on generated 30-minute and
 *            2-hour transcripts, auto-caption and manual-caption style: ms per summary on one core and
 *            the peak RSS of a process doing only that (a child process per transcript size);
 *   llm      the LLM path (createLlmSummaryGenerator over createLlmClient) against the OpenAI-compatible
 *            stand-in in its own process, answering at once: what the service itself adds to a
 *            summary beyond the model's time (chunking, prompts, JSON schema, SDK, HTTP, validation);
 *   reading  a fresh database of SUMMARIES_BENCH_COUNT (default 100,000) public ready summaries plus
 *            private, failed and generating ones that must never be listed, built with set-based SQL
 *            through the counts trigger; then browse, latest, tags, languages and channels at CLIENTS
 *            concurrent clients, in process (core/summaries/) and over HTTP (`afterimage api`).
 * Targets: a 30-minute transcript summarised offline in ≤ 200 ms (median); browse, latest and tags
 * p95 ≤ 20 ms at 100,000 summaries. SUMMARIES_BENCH_PARTS=offline,llm,reading picks parts.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { Agent, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { zodResponseFormat } from 'openai/helpers/zod';
import postgres from 'postgres';
import { z } from 'zod';
import { connect, type Sql } from '../../core/db/database.ts';
import { createLlmClient } from '../../core/llm/openaiClient.ts';
import type { JsonRequest, LlmClient } from '../../core/llm/types.ts';
import { browseSummaries, type BrowseFilters } from '../../core/summaries/browseSummaries.ts';
import { chunkLines, transcriptLines } from '../../core/llm/chunkTranscript.ts';
import { createLlmSummaryGenerator } from '../../core/summaries/llmSummariser.ts';
import { createExtractiveGenerator } from '../../core/summaries/offline/createExtractiveGenerator.ts';
import { summaryContent, type GeneratedSummary, type SummaryInput } from '../../core/summaries/summary.ts';
import { summaryChannels, summaryLanguages, summaryTags } from '../../core/summaries/summaryFacets.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { corpusVideoId } from '../../test/kit/corpus.ts';
import { loadVocabulary } from '../../test/kit/corpus-vocabulary.ts';
import { fakeChannelId } from '../../test/kit/ids.ts';
import { draw, mix32, random, zipfCdf } from '../../test/kit/random.ts';
import { talkTranscript, topicWords, type Vocabulary } from './lib/corpus.ts';
import { type BenchContext, type Benchmark, target, type Target } from './lib/harness.ts';
import { listKnob, numberKnob } from './lib/knobs.ts';
import { drive, newSample, type Sample } from './lib/load.ts';
import { postmasterPid, startService } from './lib/processes.ts';
import { median, percentile, round } from './lib/stats.ts';
import { cpuDelta, cpuOf, cpuSnapshot } from './lib/usage.ts';
import type { ChildMessage, OfflineReport, OfflineRequest } from './lib/summaries-child.ts';
import { recordingPool } from './lib/recordingPool.ts';

const SEED = 1;
const PARTS = new Set(listKnob('SUMMARIES_BENCH_PARTS', 'offline,llm,reading'));
const TARGET = { offlineMedianMs: 200, p95Ms: 20 };

// Offline generator
const TRANSCRIPTS_PER_SIZE = 4;
const WARMUP_SUMMARIES = 3;
interface TranscriptSpec {
  id: string;
  label: string;
  minutes: number;
  style: 'auto' | 'manual';
  runs: number;
}
const SPECS: TranscriptSpec[] = [
  { id: 'auto-30min', label: '30 min, auto captions', minutes: 30, style: 'auto', runs: 40 },
  { id: 'manual-30min', label: '30 min, manual captions', minutes: 30, style: 'manual', runs: 40 },
  { id: 'auto-2h', label: '2 h, auto captions', minutes: 120, style: 'auto', runs: 16 },
];

// LLM path
const LLM = { contextTokens: 8192, concurrency: 2, model: 'bench-stand-in' }; // LLM_CONTEXT_TOKENS as asked, LLM_CONCURRENCY's default
const LLM_RUNS: Record<string, number> = { 'auto-30min': 30, 'auto-2h': 12 };
const MICRO_ITERATIONS = 200;
const CHUNK_BUDGET = 5_000;

// Reading
const SUMMARIES = numberKnob('SUMMARIES_BENCH_COUNT', 100_000);
const CHANNELS = 2_000;
const PRIVATE_ON_PUBLIC = Math.round(SUMMARIES * 0.035);
const PRIVATE_ONLY = Math.round(SUMMARIES * 0.015);
const FAILED = Math.round(SUMMARIES * 0.01);
const GENERATING = Math.round(SUMMARIES * 0.005);
const OWNERS = 50;
const INSERT_BATCH = 10_000;
const LANGUAGE_MIX: Array<[string, number]> = [
  ['en', 0.5],
  ['es', 0.14],
  ['fr', 0.12],
  ['ru', 0.1],
  ['de', 0.08],
  ['ja', 0.06],
];
const CLIENTS = 8;
const POOL_SIZE = 10; // DATABASE_POOL_SIZE's default, as the API process uses
const PAGE_SIZE = 20; // the browse route's default limit
const DEEP_PAGES = [480, 490, 500]; // page × 20 ≤ MAX_RESULT_WINDOW (10,000): the deepest pages served
const ROUNDS = 2;
const REQUESTS_PER_ROUND = 240;
const ROUND_SECONDS = 1.5;
const WARMUP_REQUESTS = 30;
/** Requests of one client alone per round: the latency without queueing behind the other clients. */
const SINGLE_REQUESTS = 30;

const childScript = fileURLToPath(new URL('./lib/summaries-child.ts', import.meta.url));
const elapsed = (started: number) => (performance.now() - started) / 1000;
const ms = (value: number, digits = 1) => round(value, digits);

// ---------------------------------------------------------------------------------------------------
// Generated transcripts

interface TranscriptSet {
  spec: TranscriptSpec;
  inputs: SummaryInput[];
  warmup: SummaryInput[];
  words: number;
  cues: number;
}

function transcriptSets(words: string[]): TranscriptSet[] {
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
// Child processes (scripts/bench/lib/summaries-child.ts)

interface Child {
  child: ChildProcess;
  next(): Promise<ChildMessage>;
}

/** Forks the child script in `role` and waits for its 'ready'. */
async function forkChild(role: 'offline' | 'openai'): Promise<Child & { ready: ChildMessage & { type: 'ready' } }> {
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

async function measureOffline(
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

async function measureLlm(
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

const arrayLiteral = (items: string[]) => `{${items.map((item) => `"${item.replace(/["\\]/g, '\\$&')}"`).join(',')}}`;

/** Per language, the tags summaries of it draw from (lower case, ≤ 40 characters, most used first) with Zipf weights. */
function tagVocabularies(vocabulary: Vocabulary) {
  const clean = (tags: string[]) => [
    ...new Set(tags.map((tag) => tag.toLowerCase().trim()).filter((tag) => tag.length >= 2 && tag.length <= 40)),
  ];
  const en = clean(vocabulary.vocabularies.en.tags);
  const lists: Record<string, string[]> = {
    en,
    fr: clean(vocabulary.vocabularies.fr.tags),
    ru: clean(vocabulary.vocabularies.ru.tags),
    // No Spanish or German datasets: their summaries draw from the English tags (as much of YouTube's tagging is).
    es: en,
    de: en,
    ja: [...vocabulary.cjk.words, ...en],
  };
  return Object.fromEntries(
    Object.entries(lists).map(([language, list]) => [language, { list, cdf: zipfCdf(list.length, 1, 2.7) }]),
  ) as Record<string, { list: string[]; cdf: Float64Array }>;
}

interface StoreTiming {
  count: number;
  medianMs: number | null;
  p95Ms: number | null;
  perSecond: number | null;
}

interface Build {
  seconds: { channelsAndVideos: number; bulkSummaries: number; facets: number; vacuumAnalyze: number; total: number };
  rows: { channels: number; videos: number; publicReady: number; private: number; failed: number; generating: number; facets: number };
  bulkSummariesPerSecond: number;
  /** Summaries stored one at a time as requestSummary + generateSummary do (insert generating, update ready), and many in one INSERT. */
  stored: {
    withoutTrigger: StoreTiming;
    withTrigger: StoreTiming;
    multiRowWithTrigger: { rows: number; seconds: number; perSecond: number };
  };
  sizeMiB: { summaries: number; summariesIndexes: number; facets: number };
  averageTags: number;
  checks: string[];
}

/** One summary to store: its video (by index), owner, status, time, and what it says. */
interface SummarySeed {
  video: number;
  owner: string | null;
  status: 'generated' | 'failed' | 'generating';
  at: number;
  language: string;
  tags: string;
  model: string;
  k: number;
}

const SINGLE_PLAIN = 300;
const MULTI_STORE = 1_000;
const SINGLE_STORES = 1_000;

/** Summaries (any status) in one set-based INSERT … SELECT FROM unnest; texts are the templates' (1-based `k`). */
async function insertSummaries(
  sql: Sql,
  rows: SummarySeed[],
  texts: { tldrs: string[]; points: string[]; details: string[] },
): Promise<void> {
  await sql`
    insert into summaries (video_id, channel_id, owner_id, private, status, error, title, tldr, key_points, detailed_summary, tags, language,
      llm_model, prompt_tokens, completion_tokens, requested_at, generated_at, updated_at)
    select v.video_id, v.channel_id, x.owner, x.owner is not null, x.status,
      case when x.status = 'failed' then 'the LLM endpoint was unavailable (gave up after 5 attempts)' end,
      case when x.status = 'generated' then v.title end,
      case when x.status = 'generated' then (${texts.tldrs}::text[])[x.k] end,
      case when x.status = 'generated' then ((${texts.points}::text[])[x.k])::jsonb end,
      case when x.status = 'generated' then (${texts.details}::text[])[x.k] end,
      case when x.status = 'generated' then x.tags::text[] else '{}' end,
      case when x.status = 'generated' then x.language end,
      case when x.status = 'generated' then x.model end,
      case when x.status = 'generated' and x.model <> 'afterimage-extractive-1' then 9000 + x.k * 100 end,
      case when x.status = 'generated' and x.model <> 'afterimage-extractive-1' then 900 + x.k * 10 end,
      x.at - interval '40 seconds', case when x.status = 'generated' then x.at end, x.at
    from unnest(${rows.map((row) => corpusVideoId(SEED, row.video))}::text[], ${rows.map((row) => row.owner)}::uuid[], ${rows.map((row) => row.status)}::text[],
      ${rows.map((row) => row.k)}::int[], ${rows.map((row) => row.tags)}::text[], ${rows.map((row) => row.language)}::text[], ${rows.map((row) => row.model)}::text[],
      ${rows.map((row) => new Date(row.at).toISOString())}::timestamptz[])
      as x(video, owner, status, k, tags, language, model, at)
    join videos v on v.video_id = x.video`;
}

/** One public summary stored as the service does: requested (insert, generating), then written (update to ready), each its own transaction. */
async function storeSummary(sql: Sql, row: SummarySeed, template: GeneratedSummary): Promise<void> {
  const videoId = corpusVideoId(SEED, row.video);
  const at = new Date(row.at);
  const [inserted] = await sql<{ id: string }[]>`
    insert into summaries (video_id, channel_id, requested_at, updated_at)
    select video_id, channel_id, ${new Date(row.at - 40_000)}, ${new Date(row.at - 40_000)} from videos where video_id = ${videoId}
    returning id::text as id`;
  await sql`
    update summaries set status = 'generated', error = null, title = (select title from videos where video_id = ${videoId}), tldr = ${template.tldr},
      key_points = ${sql.json(template.keyPoints)}, detailed_summary = ${template.detailedSummary}, tags = ${row.tags}::text[], language = ${row.language},
      llm_model = ${row.model}, generated_at = ${at}, updated_at = ${at}
    where id = ${inserted!.id} and status = 'generating'`;
}

function storeTiming(latencies: number[], seconds: number): StoreTiming {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    count: sorted.length,
    medianMs: ms(median(sorted), 2),
    p95Ms: ms(percentile(sorted, 95), 2),
    perSecond: round(sorted.length / seconds, 0),
  };
}

/** Public ready summaries' facet rows counted from the table, as summary_facet_rows (sql/015) lists them. */
const FACET_RECOUNT = `
  select facet, language, value, count(*)::int as count from (
    select 'language' as facet, '' as language, s.language as value from summaries s where s.status = 'generated' and not s.private
    union all select 'tag', s.language, t.tag from summaries s cross join unnest(s.tags) as t(tag) where s.status = 'generated' and not s.private
    union all select 'tag', '', t.tag from summaries s cross join unnest(s.tags) as t(tag) where s.status = 'generated' and not s.private
    union all select 'channel', '', s.channel_id from summaries s where s.status = 'generated' and not s.private) r
  group by facet, language, value`;

/**
 * Channels, videos and summaries. Most summaries go in with set-based INSERTs while the counts
 * trigger is disabled, their summary_facets rows and videos.has_summary then set in one statement
 * each; the newest ones go through the trigger: 1,000 in one multi-row INSERT, then 1,000 one at
 * a time as the service stores them (a few hundred are stored one at a time without the trigger
 * first, for comparison). A recount from the table must then agree with every count.
 */
async function buildDatabase(ctx: BenchContext, sql: Sql, vocabulary: Vocabulary, templates: GeneratedSummary[]): Promise<Build> {
  const rnd = random(mix32(SEED, 0xdb));
  const tags = tagVocabularies(vocabulary);
  const titleWords = topicWords(vocabulary);
  const titleCdf = zipfCdf(titleWords.length, 0.9, 5);
  const title = (count: number) =>
    Array.from({ length: count }, () => titleWords[draw(titleCdf, rnd)]!)
      .join(' ')
      .replace(/^./, (c) => c.toUpperCase());
  const started = performance.now();

  // Channels, each with a main language; videos spread over them Zipf-like.
  const channelIds = Array.from({ length: CHANNELS }, (_, i) => fakeChannelId(`summaries-bench:${SEED}:${i}`));
  const channelLanguage = channelIds.map(() => {
    let u = rnd();
    for (const [language, share] of LANGUAGE_MIX) if ((u -= share) < 0) return language;
    return 'en';
  });
  const channelCdf = zipfCdf(CHANNELS, 0.9, 3);
  const videoCount = SUMMARIES + PRIVATE_ONLY + FAILED + GENERATING;
  const videoChannel = Int32Array.from({ length: videoCount }, () => draw(channelCdf, rnd));

  // Every summary, in the order they were generated (ids and times rise together, as they do live).
  const owners = (
    await sql<{ id: string }[]>`
    insert into users (email, tier) select 'summaries-bench-' || g || '@example.org', 'registered' from generate_series(1, ${OWNERS}::int) g returning id::text`
  ).map((row) => row.id);
  const generatedFrom = Date.UTC(2024, 6, 1);
  const span = 730 * 86_400_000;
  let tagTotal = 0;
  const seed = (video: number, owner: string | null, status: SummarySeed['status'], at: number, k: number): SummarySeed => {
    const language = rnd() < 0.9 ? channelLanguage[videoChannel[video]!]! : 'en';
    const vocabularyOf = tags[language]!;
    const wanted = 6 + Math.floor(rnd() * 5);
    const chosen = new Set<string>();
    for (let attempt = 0; chosen.size < wanted && attempt < 40; attempt++) chosen.add(vocabularyOf.list[draw(vocabularyOf.cdf, rnd)]!);
    if (status === 'generated' && owner === null) tagTotal += chosen.size;
    return {
      video,
      owner,
      status,
      at,
      language,
      tags: arrayLiteral([...chosen]),
      model: rnd() < 0.8 ? 'afterimage-extractive-1' : 'gpt-4o-mini',
      k: 1 + (k % templates.length),
    };
  };
  const publicReady = Array.from({ length: SUMMARIES }, (_, i) =>
    seed(i, null, 'generated', generatedFrom + (i / SUMMARIES) * span + (rnd() - 0.5) * 3_600_000, i),
  );
  publicReady.sort((a, b) => a.at - b.at);
  const later = () => generatedFrom + rnd() * span;
  // Private ones (on publicly summarised videos and on others), failed and generating ones: never listed.
  const others: SummarySeed[] = [
    ...Array.from({ length: PRIVATE_ON_PUBLIC }, (_, j) => seed((j * 29) % SUMMARIES, owners[j % OWNERS]!, 'generated', later(), j)),
    ...Array.from({ length: PRIVATE_ONLY }, (_, j) => seed(SUMMARIES + j, owners[j % OWNERS]!, 'generated', later(), j)),
    ...Array.from({ length: FAILED }, (_, j) => seed(SUMMARIES + PRIVATE_ONLY + j, null, 'failed', later(), j)),
    ...Array.from({ length: GENERATING }, (_, j) => seed(SUMMARIES + PRIVATE_ONLY + FAILED + j, null, 'generating', later(), j)),
  ];
  const throughTrigger = Math.min(SUMMARIES, MULTI_STORE + SINGLE_STORES);
  const single = publicReady.slice(SUMMARIES - Math.min(SUMMARIES, SINGLE_STORES));
  const multi = publicReady.slice(SUMMARIES - throughTrigger, SUMMARIES - single.length);
  const plain = publicReady.slice(Math.max(0, SUMMARIES - throughTrigger - SINGLE_PLAIN), SUMMARIES - throughTrigger);
  const bulk = [...publicReady.slice(0, SUMMARIES - throughTrigger - plain.length), ...others].sort((a, b) => a.at - b.at);
  // has_summary as the trigger would have left it for the summaries that bypass it.
  const hasSummary = new Uint8Array(videoCount);
  for (const row of [...bulk, ...plain]) if (row.status === 'generated' && row.owner === null) hasSummary[row.video] = 1;

  await sql`
    insert into channels (channel_id, title, subscriber_count)
    select * from unnest(${channelIds}::text[], ${channelIds.map(() => title(2))}::text[], ${channelIds.map(() => Math.floor(rnd() * 1e6))}::bigint[])`;
  for (let batch = 0; batch < videoCount; batch += INSERT_BATCH) {
    const indexes = Array.from({ length: Math.min(INSERT_BATCH, videoCount - batch) }, (_, i) => batch + i);
    await sql`
      insert into videos (video_id, channel_id, title, duration_seconds, view_count, upload_date, language, status, has_summary)
      select id, channel, title, duration, views, day, language, 'live', summary = 't'
      from unnest(${indexes.map((i) => corpusVideoId(SEED, i))}::text[], ${indexes.map((i) => channelIds[videoChannel[i]!]!)}::text[],
        ${indexes.map(() => title(4 + Math.floor(rnd() * 6)))}::text[], ${indexes.map(() => 60 + Math.floor(rnd() * 3600))}::int[],
        ${indexes.map(() => Math.floor(rnd() ** 3 * 1e7))}::bigint[], ${indexes.map(() => new Date(Date.UTC(2015, 0, 1) + rnd() * 3.5e11).toISOString().slice(0, 10))}::date[],
        ${indexes.map((i) => channelLanguage[videoChannel[i]!]!)}::text[], ${indexes.map((i) => (hasSummary[i] ? 't' : 'f'))}::text[])
        as x(id, channel, title, duration, views, day, language, summary)`;
  }
  const channelsAndVideos = elapsed(started);
  ctx.progress(
    `${CHANNELS.toLocaleString('en')} channels and ${videoCount.toLocaleString('en')} videos in ${round(channelsAndVideos, 1)} s`,
  );

  const texts = {
    tldrs: templates.map((t) => t.tldr),
    points: templates.map((t) => JSON.stringify(t.keyPoints)),
    details: templates.map((t) => t.detailedSummary),
  };
  const template = (row: SummarySeed) => templates[row.k - 1]!;
  await sql`alter table summaries disable trigger summaries_counts`;
  const bulkStarted = performance.now();
  for (let batch = 0; batch < bulk.length; batch += INSERT_BATCH)
    await insertSummaries(sql, bulk.slice(batch, batch + INSERT_BATCH), texts);
  const bulkSummaries = elapsed(bulkStarted);
  const plainLatencies: number[] = [];
  const plainStarted = performance.now();
  for (const row of plain) {
    const begun = performance.now();
    await storeSummary(sql, row, template(row));
    plainLatencies.push(performance.now() - begun);
  }
  const withoutTrigger = storeTiming(plainLatencies, elapsed(plainStarted));
  const facetsStarted = performance.now();
  await sql.unsafe(`insert into summary_facets (facet, language, value, count) ${FACET_RECOUNT}`);
  await sql`alter table summaries enable trigger summaries_counts`;
  const facets = elapsed(facetsStarted);
  ctx.progress(
    `${bulk.length.toLocaleString('en')} summaries in ${round(bulkSummaries, 1)} s without the counts trigger, their counts in ${round(facets, 1)} s`,
  );

  // The statistics a live database would have before the newest summaries arrive.
  let vacuumAnalyze = 0;
  const vacuum = async () => {
    const begun = performance.now();
    for (const table of ['summaries', 'summary_facets', 'videos']) await sql.unsafe(`vacuum analyze ${table}`);
    await sql`analyze channels`;
    vacuumAnalyze += elapsed(begun);
  };
  await vacuum();
  const multiStarted = performance.now();
  if (multi.length > 0) await insertSummaries(sql, multi, texts);
  const multiSeconds = elapsed(multiStarted);
  const singleLatencies: number[] = [];
  const singleStarted = performance.now();
  for (const row of single) {
    const begun = performance.now();
    await storeSummary(sql, row, template(row));
    singleLatencies.push(performance.now() - begun);
  }
  const withTrigger = storeTiming(singleLatencies, elapsed(singleStarted));
  ctx.progress(
    `through the counts trigger: ${multi.length} summaries in one INSERT in ${round(multiSeconds, 1)} s; ${single.length} stored one at a time, median ${withTrigger.medianMs} ms (${withoutTrigger.medianMs} ms without the trigger)`,
  );
  await vacuum();

  // What the trigger kept, against a recount from the table, and the listing's invariants.
  const checks: string[] = [];
  const [counts] = await sql<
    { publicReady: number; private: number; failed: number; generating: number; hasSummary: number; facets: number; languageSum: number }[]
  >`
    select
      (select count(*)::int from summaries where status = 'generated' and not private) as "publicReady",
      (select count(*)::int from summaries where private) as private,
      (select count(*)::int from summaries where status = 'failed') as failed,
      (select count(*)::int from summaries where status = 'generating') as generating,
      (select count(*)::int from videos where has_summary) as "hasSummary",
      (select count(*)::int from summary_facets) as facets,
      (select coalesce(sum(count), 0)::int from summary_facets where facet = 'language') as "languageSum"`;
  const [drift] = await sql.unsafe<{ differing: number }[]>(`
    with recount as (${FACET_RECOUNT})
    select count(*)::int as differing from (
      (select facet, language, value, count from recount except select facet, language, value, count from summary_facets)
      union all
      (select facet, language, value, count from summary_facets except select facet, language, value, count from recount)) d`);
  if (counts!.publicReady !== SUMMARIES) checks.push(`${counts!.publicReady} public ready summaries stored, ${SUMMARIES} meant`);
  if (counts!.hasSummary !== SUMMARIES)
    checks.push(`videos.has_summary is true for ${counts!.hasSummary} videos, ${SUMMARIES} have a public ready summary`);
  if (counts!.languageSum !== SUMMARIES) checks.push(`the language counts add up to ${counts!.languageSum}, not ${SUMMARIES}`);
  if (drift!.differing > 0) checks.push(`${drift!.differing} summary_facets rows differ from a recount of the table`);
  const [size] = await sql<{ table: number; indexes: number; facets: number }[]>`
    select pg_table_size('summaries')::float8 as table, pg_indexes_size('summaries')::float8 as indexes, pg_total_relation_size('summary_facets')::float8 as facets`;
  return {
    seconds: {
      channelsAndVideos: round(channelsAndVideos, 1)!,
      bulkSummaries: round(bulkSummaries, 1)!,
      facets: round(facets, 1)!,
      vacuumAnalyze: round(vacuumAnalyze, 1)!,
      total: round(elapsed(started), 1)!,
    },
    rows: {
      channels: CHANNELS,
      videos: videoCount,
      publicReady: counts!.publicReady,
      private: counts!.private,
      failed: counts!.failed,
      generating: counts!.generating,
      facets: counts!.facets,
    },
    bulkSummariesPerSecond: Math.round(bulk.length / bulkSummaries),
    stored: {
      withoutTrigger,
      withTrigger,
      multiRowWithTrigger: { rows: multi.length, seconds: round(multiSeconds, 2)!, perSecond: Math.round(multi.length / multiSeconds) },
    },
    sizeMiB: {
      summaries: round(size!.table / 2 ** 20, 0)!,
      summariesIndexes: round(size!.indexes / 2 ** 20, 0)!,
      facets: round(size!.facets / 2 ** 20, 0)!,
    },
    averageTags: round(tagTotal / SUMMARIES, 1)!,
    checks,
  };
}

// ---------------------------------------------------------------------------------------------------
// Part 3: reading at scale — the query mix

interface Variant {
  browse?: { filters: BrowseFilters; page: number };
  path: string;
  describe: string;
}
interface QueryClass {
  id: string;
  label: string;
  /** Judged against the p95 target (browse, latest, tags). */
  judged: boolean;
  variants: Variant[];
  inProcess(sql: Sql, variant: Variant): Promise<{ ids: string[]; total: number | null; privateShown: number }>;
}

const browseCall = async (sql: Sql, variant: Variant) => {
  const { filters, page } = variant.browse!;
  const { rows, total } = await browseSummaries(sql, filters, { offset: (page - 1) * PAGE_SIZE, limit: PAGE_SIZE });
  return {
    ids: rows.map((row) => row.video_id),
    total,
    privateShown: rows.filter((row) => row.private || row.status !== 'generated').length,
  };
};

const browseVariant = (filters: BrowseFilters, page = 1): Variant => {
  const params = new URLSearchParams({ limit: String(PAGE_SIZE) });
  if (filters.tag !== undefined) params.set('tag', filters.tag);
  if (filters.channelId !== undefined) params.set('channelId', filters.channelId);
  if (filters.language !== undefined) params.set('language', filters.language);
  if (page > 1) params.set('page', String(page));
  return {
    browse: { filters, page },
    path: `/api/summary/browse?${params}`,
    describe: `${JSON.stringify(filters)}${page > 1 ? ` page ${page}` : ''}`,
  };
};

async function queryClasses(sql: Sql): Promise<QueryClass[]> {
  const tagRows = await sql<
    { value: string; count: number }[]
  >`select value, count from summary_facets where facet = 'tag' and language = '' order by count desc, value`;
  const common = tagRows.slice(0, 5);
  const mid = tagRows.filter((row) => row.count >= SUMMARIES * 0.004 && row.count <= SUMMARIES * 0.01).slice(0, 5);
  const rare = tagRows
    .filter((row) => row.count >= 5 && row.count <= 30)
    .filter((_, i) => i % 97 === 0)
    .slice(0, 8);
  const channels = await sql<
    { value: string; count: number }[]
  >`select value, count from summary_facets where facet = 'channel' order by count desc, value`;
  const spreadChannels = Array.from({ length: 12 }, (_, i) => channels[Math.floor((i * (channels.length - 1)) / 11)]!).filter(Boolean);
  const languages = await sql<
    { value: string; count: number }[]
  >`select value, count from summary_facets where facet = 'language' order by count desc`;
  // A popular tag of each language other than the biggest, with that language.
  const tagLanguage = await sql<{ value: string; language: string; count: number }[]>`
    select distinct on (language) value, language, count from summary_facets
    where facet = 'tag' and language <> '' and language <> ${languages[0]!.value}
    order by language, count desc, value`;
  const single = (
    id: string,
    label: string,
    path: string,
    call: (sql: Sql) => Promise<{ ids: string[]; total: number | null; privateShown: number }>,
    judged: boolean,
  ): QueryClass => ({
    id,
    label,
    judged,
    variants: [{ path, describe: path }],
    inProcess: (pool) => call(pool),
  });
  const classes: QueryClass[] = [
    { id: 'browse-all', label: 'browse, no filter (page 1)', judged: true, variants: [browseVariant({})], inProcess: browseCall },
    {
      id: 'browse-tag-common',
      label: `browse by common tag (${common.map((t) => `${t.value} ${t.count}`).join(', ')})`,
      judged: true,
      variants: common.map((t) => browseVariant({ tag: t.value })),
      inProcess: browseCall,
    },
    {
      id: 'browse-tag-mid',
      label: `browse by mid-frequency tag (${mid.map((t) => t.count).join(', ')} summaries)`,
      judged: true,
      variants: mid.map((t) => browseVariant({ tag: t.value })),
      inProcess: browseCall,
    },
    {
      id: 'browse-tag-rare',
      label: `browse by rare tag (${rare.map((t) => t.count).join(', ')} summaries)`,
      judged: true,
      variants: rare.map((t) => browseVariant({ tag: t.value })),
      inProcess: browseCall,
    },
    {
      id: 'browse-channel',
      label: `browse by channel (${spreadChannels.length} channels, ${spreadChannels.at(-1)?.count}-${spreadChannels[0]?.count} summaries)`,
      judged: true,
      variants: spreadChannels.map((c) => browseVariant({ channelId: c.value })),
      inProcess: browseCall,
    },
    {
      id: 'browse-language',
      label: `browse by language (${languages.map((l) => `${l.value} ${l.count}`).join(', ')})`,
      judged: true,
      variants: languages.map((l) => browseVariant({ language: l.value })),
      inProcess: browseCall,
    },
    {
      id: 'browse-tag-language',
      label: `browse by tag + language (${tagLanguage.map((t) => `${t.language}:${t.value} ${t.count}`).join(', ')})`,
      judged: true,
      variants: tagLanguage.map((t) => browseVariant({ tag: t.value, language: t.language })),
      inProcess: browseCall,
    },
    {
      id: 'browse-deep',
      label: `browse, no filter, deep pages (${DEEP_PAGES.join(', ')} of ${PAGE_SIZE})`,
      judged: true,
      variants: DEEP_PAGES.map((page) => browseVariant({}, page)),
      inProcess: browseCall,
    },
    single(
      'latest',
      `latest (${PAGE_SIZE})`,
      `/api/summary/latest?limit=${PAGE_SIZE}`,
      async (pool) => {
        const { rows } = await browseSummaries(pool, {}, { offset: 0, limit: PAGE_SIZE });
        return {
          ids: rows.map((row) => row.video_id),
          total: null,
          privateShown: rows.filter((row) => row.private || row.status !== 'generated').length,
        };
      },
      true,
    ),
    single(
      'tags',
      'summaryTags (50 per list, every language)',
      '/api/summary/tags',
      async (pool) => {
        const { tags: list, languages: byLanguage } = await summaryTags(pool, { limit: 50 });
        return { ids: list.map((t) => t.tag), total: byLanguage.length, privateShown: 0 };
      },
      true,
    ),
    single(
      'languages',
      'summaryLanguages',
      '/api/summary/languages',
      async (pool) => {
        const list = await summaryLanguages(pool);
        return { ids: list.map((l) => l.language), total: list.length, privateShown: 0 };
      },
      false,
    ),
    single(
      'channels',
      'summaryChannels (page 1 of 50)',
      '/api/summary/channels',
      async (pool) => {
        const { rows, total } = await summaryChannels(pool, { offset: 0, limit: 50 });
        return { ids: rows.map((r) => r.channelId), total, privateShown: 0 };
      },
      false,
    ),
  ];
  // A small test build may have no tag in some frequency band.
  return classes.filter((query) => query.variants.length > 0);
}

interface Cpu {
  selfUs: number;
  postgresUs: number | null;
  apiUs: number | null;
  machineUs: number | null;
}
interface MeasuredSample extends Sample {
  cpu: Cpu;
}
const newMeasuredSample = (): MeasuredSample => ({ ...newSample(), cpu: { selfUs: 0, postgresUs: 0, apiUs: 0, machineUs: 0 } });

/** Keeps `clients` calls in flight, variants in turn, until `count` are done or `seconds` have passed; a call may answer with the bytes it read. */
const driveVariants = (
  call: (variant: number) => Promise<unknown>,
  variants: number,
  options: { count: number; seconds: number; clients: number },
  sample?: Sample,
) => drive((i) => call(i % variants), { ...options, variants }, sample);

/** `drive` with the CPU that this process, PostgreSQL, the API process and the whole machine used meanwhile added to the sample. */
async function driveMeasured(
  call: (variant: number) => Promise<unknown>,
  variants: number,
  options: { count: number; seconds: number; clients: number },
  sample: MeasuredSample,
  processes: { postmaster: number | undefined; api: number },
) {
  const add = (a: number | null, b: number | null | undefined) => (a === null || b === null || b === undefined ? null : a + b);
  const start = cpuSnapshot(processes.postmaster);
  const apiStart = cpuOf(processes.api);
  await driveVariants(call, variants, options, sample);
  const delta = cpuDelta(start, cpuSnapshot(processes.postmaster));
  const apiEnd = cpuOf(processes.api);
  sample.cpu.selfUs += delta.selfUs;
  sample.cpu.postgresUs = add(sample.cpu.postgresUs, delta.postgresUs);
  sample.cpu.apiUs = add(sample.cpu.apiUs, apiStart === undefined || apiEnd === undefined ? null : apiEnd - apiStart);
  sample.cpu.machineUs = add(sample.cpu.machineUs, delta.machineBusyUs);
}

interface Stats {
  requests: number;
  errors: number;
  p50: number | null;
  p95: number | null;
  p99: number | null;
  qps: number | null;
  /** CPU per request, µs: this process (the caller: in process the query function and postgres.js, over HTTP the client), the API process, PostgreSQL. */
  cpuUs: { self: number | null; api: number | null; postgres: number | null };
  /** Cores busy with something else meanwhile (other processes of the machine): a disturbance gauge. */
  otherCores: number | null;
  kilobytesPerResponse: number | null;
}
function stats(sample: MeasuredSample): Stats {
  const sorted = [...sample.latencies].sort((a, b) => a - b);
  const n = Math.max(1, sorted.length);
  const { selfUs, postgresUs, apiUs, machineUs } = sample.cpu;
  const perRequest = (us: number | null) => (us === null ? null : round(us / n, 0));
  return {
    requests: sorted.length,
    errors: sample.errors,
    p50: ms(percentile(sorted, 50), 2),
    p95: ms(percentile(sorted, 95), 2),
    p99: ms(percentile(sorted, 99), 2),
    qps: round(sorted.length / sample.seconds, 0),
    cpuUs: { self: perRequest(selfUs), api: perRequest(apiUs), postgres: perRequest(postgresUs) },
    otherCores:
      machineUs === null || postgresUs === null || apiUs === null
        ? null
        : round(Math.max(0, machineUs - selfUs - postgresUs - apiUs) / (sample.seconds * 1e6), 2),
    kilobytesPerResponse: sample.bytes ? round(sample.bytes / n / 1024, 1) : null,
  };
}

/** GET `path` on the API; resolves with the status and body once the whole body is in. */
function httpGetter(baseUrl: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  const { hostname, port } = new URL(baseUrl);
  return {
    get(path: string): Promise<{ status: number; body: string }> {
      return new Promise((resolve, reject) => {
        const req = httpRequest({ agent, hostname, port, path }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end();
      });
    },
    close: () => agent.destroy(),
  };
}

/** A parameter as an SQL literal, for EXECUTE of a prepared statement (the recorded values are strings, numbers or null). */
const literal = (value: unknown): string =>
  value === null || value === undefined
    ? 'null'
    : typeof value === 'number' || typeof value === 'bigint'
      ? String(value)
      : `'${String(value).replaceAll("'", "''")}'`;

/**
 * EXPLAIN (ANALYZE, BUFFERS) of every statement one call runs, with the plan it gets for its
 * parameters (custom) and the one a prepared statement gets once PostgreSQL stops replanning it
 * (generic: postgres.js prepares every statement, and after 5 executions the plan cache may keep
 * the generic plan). The call is made once through a pool that records its statements; they are
 * then explained in a transaction that is rolled back, and run 8 times more on one connection to
 * read from pg_prepared_statements which plans were used.
 */
interface PlanTiming {
  statement: string;
  customMs: number | null;
  genericMs: number | null;
  genericRuns: number | null;
  customRuns: number | null;
}

async function explainCall(url: string, call: (sql: Sql) => Promise<unknown>): Promise<{ plan: string; timings: PlanTiming[] }> {
  const { sql, statements, stop } = recordingPool(url);
  try {
    await call(sql);
    stop();
    const selects = statements.filter(({ text }) => /^\s*(with|select)\b/i.test(text) && !text.includes('pg_catalog.'));
    const plans: string[] = [];
    const timings: PlanTiming[] = [];
    const executionMs = (rows: postgres.RowList<postgres.Row[]>) => {
      const line = rows.map((row) => String(row['QUERY PLAN'])).find((text) => text.startsWith('Execution Time:'));
      return line ? Number(/([\d.]+) ms/.exec(line)?.[1]) : null;
    };
    await sql
      .begin(async (tx) => {
        for (const [index, { text, params }] of selects.entries()) {
          const custom = await tx.unsafe(`explain (analyze, buffers, format text) ${text}`, params as never[]);
          await tx.unsafe(`prepare bench_explain_${index} as ${text}`);
          await tx.unsafe(`set local plan_cache_mode = force_generic_plan`);
          const generic = await tx.unsafe(
            `explain (analyze, buffers, format text) execute bench_explain_${index}${params.length ? `(${params.map(literal).join(', ')})` : ''}`,
          );
          await tx.unsafe(`set local plan_cache_mode = auto`);
          const lines = (rows: postgres.RowList<postgres.Row[]>) => rows.map((row) => row['QUERY PLAN']).join('\n');
          timings.push({
            statement: text.replace(/\s+/g, ' ').trim(),
            customMs: executionMs(custom),
            genericMs: executionMs(generic),
            genericRuns: null,
            customRuns: null,
          });
          plans.push(
            `${text.replace(/\s+/g, ' ').trim()}\nparameters: ${params.map(literal).join(', ')}\n-- custom plan (for these parameters):\n${lines(custom)}\n-- generic plan (a prepared statement's, parameters unknown):\n${lines(generic)}`,
          );
        }
        throw new Rollback();
      })
      .catch((error: unknown) => {
        if (!(error instanceof Rollback)) throw error;
      });
    for (const [index, { text, params }] of selects.entries()) {
      for (let run = 0; run < 8; run++) await sql.unsafe(text, params as never[], { prepare: true });
      const [used] = await sql<
        { generic: number; custom: number }[]
      >`select generic_plans::int as generic, custom_plans::int as custom from pg_prepared_statements where statement = ${text}`;
      if (used) Object.assign(timings[index]!, { genericRuns: used.generic, customRuns: used.custom });
      plans[index] +=
        `\n-- the same statement run 9 times on one connection, as the pool runs it: ${used ? `${used.generic} generic and ${used.custom} custom plans` : 'not found in pg_prepared_statements'}`;
    }
    return { plan: plans.join('\n\n'), timings };
  } finally {
    await sql.end({ timeout: 5 });
  }
}
class Rollback extends Error {}

interface ClassResult {
  id: string;
  label: string;
  judged: boolean;
  variants: string[];
  inProcess: Stats;
  http: Stats;
  /** One client alone: latency without queueing. */
  inProcessAlone: { p50: number | null; p95: number | null };
  httpAlone: { p50: number | null; p95: number | null };
  /** Median ms of each variant, one client alone in process: what each costs without queueing. */
  variantMedians: Array<{ variant: string; ms: number | null }>;
  /** The variant with the highest 25th percentile alone (the one explained when the class misses). */
  slowestVariant: number;
}
async function measureReading(ctx: BenchContext, vocabulary: Vocabulary, templates: GeneratedSummary[]) {
  const db = await ctx.database();
  // Building takes statements longer than the harness pools' 15 s timeout: a pool without one.
  const buildSql = connect(db.url, { max: 1, role: 'bench-build' });
  const sql = db.pool({ max: POOL_SIZE, role: 'api' });
  const problems: string[] = [];
  let api: Awaited<ReturnType<typeof startService>> | undefined;
  let http: ReturnType<typeof httpGetter> | undefined;
  try {
    ctx.progress(
      `building ${SUMMARIES.toLocaleString('en')} public summaries in ${CHANNELS.toLocaleString('en')} channels (+ private, failed and generating ones)`,
    );
    const build = await buildDatabase(ctx, buildSql, vocabulary, templates);
    problems.push(...build.checks);
    ctx.progress(
      `built in ${build.seconds.total} s (vacuum + analyze ${build.seconds.vacuumAnalyze} s); ${build.rows.facets.toLocaleString('en')} facet rows; checks: ${build.checks.length ? build.checks.join('; ') : 'all agree'}`,
    );

    // Anonymous callers may browse; their 30 requests a minute would stop the load at once.
    await updateTier(sql, 'anonymous', { limits: { requestsPerMinute: null } });
    api = await startService('api', {
      DATABASE_URL: db.url,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: ctx.dataDir,
      DATABASE_POOL_SIZE: String(POOL_SIZE),
      ARCHIVE_DIR: join(ctx.dataDir, 'summaries-no-archive'),
      YOUTUBE_API_KEY: '',
      WAYBACK_ENABLED: 'false',
    });
    http = httpGetter(api.url!);
    const client = http;

    const classes = await queryClasses(sql);
    // Every variant once each way: same answers, no private, failed or generating summary shown, 200s only.
    for (const query of classes) {
      for (const variant of query.variants) {
        const local = await query.inProcess(sql, variant);
        if (local.privateShown) problems.push(`${query.id} ${variant.describe}: ${local.privateShown} private or unready summaries listed`);
        const answer = await client.get(variant.path);
        if (answer.status !== 200) {
          problems.push(`${query.id} GET ${variant.path}: status ${answer.status} ${answer.body.slice(0, 200)}`);
          continue;
        }
        const body = JSON.parse(answer.body) as {
          data: { items?: Array<{ videoId: string; private: boolean; status: string }>; total?: number };
        };
        const items = body.data.items;
        if (items && variant.browse) {
          if (items.some((item) => item.private || item.status !== 'generated'))
            problems.push(`${query.id} GET ${variant.path}: private or unready summaries listed`);
          if (items.map((item) => item.videoId).join() !== local.ids.join())
            problems.push(`${query.id} GET ${variant.path}: another page than browseSummaries`);
          if (body.data.total !== undefined && body.data.total !== local.total)
            problems.push(`${query.id} GET ${variant.path}: total ${body.data.total}, browseSummaries says ${local.total}`);
        }
      }
    }

    const processes = { postmaster: await postmasterPid(sql), api: api.pid };
    const samples = classes.map(() => ({
      inProcess: newMeasuredSample(),
      http: newMeasuredSample(),
      inProcessAlone: newMeasuredSample(),
      httpAlone: newMeasuredSample(),
    }));
    const measureStarted = performance.now();
    const loaded = { count: REQUESTS_PER_ROUND, seconds: ROUND_SECONDS, clients: CLIENTS };
    for (let roundIndex = 0; roundIndex < ROUNDS; roundIndex++) {
      for (const [index, query] of classes.entries()) {
        const engines = [
          {
            sample: samples[index]!.inProcess,
            alone: samples[index]!.inProcessAlone,
            call: (v: number) => query.inProcess(sql, query.variants[v]!),
          },
          {
            sample: samples[index]!.http,
            alone: samples[index]!.httpAlone,
            call: async (v: number) => {
              const answer = await client.get(query.variants[v]!.path);
              if (answer.status !== 200) throw new Error(`status ${answer.status}: ${answer.body.slice(0, 200)}`);
              return Buffer.byteLength(answer.body);
            },
          },
        ];
        // Engines take turns, starting with a different one each round.
        for (let turn = 0; turn < engines.length; turn++) {
          const engine = engines[(turn + roundIndex + index) % engines.length]!;
          await driveVariants(engine.call, query.variants.length, { ...loaded, count: WARMUP_REQUESTS });
          await driveMeasured(engine.call, query.variants.length, loaded, engine.sample, processes);
          await driveVariants(
            engine.call,
            query.variants.length,
            { count: SINGLE_REQUESTS, seconds: ROUND_SECONDS, clients: 1 },
            engine.alone,
          );
        }
      }
    }
    const measureSeconds = elapsed(measureStarted);

    // By the 25th percentile alone: a variant that is slow every time, not one that met a slow connection now and then.
    const slowestOf = (sample: Sample) => {
      const medians = sample.byVariant.map((list) =>
        list.length
          ? percentile(
              [...list].sort((x, y) => x - y),
              25,
            )
          : -1,
      );
      return medians.reduce((best, value, v) => (value > (medians[best] ?? -1) ? v : best), 0);
    };
    const alone = (sample: Sample) => {
      const sorted = [...sample.latencies].sort((x, y) => x - y);
      return { p50: ms(percentile(sorted, 50), 2), p95: ms(percentile(sorted, 95), 2) };
    };
    const results: ClassResult[] = classes.map((query, index) => ({
      id: query.id,
      label: query.label,
      judged: query.judged,
      variants: query.variants.map((variant) => variant.describe),
      inProcess: stats(samples[index]!.inProcess),
      http: stats(samples[index]!.http),
      inProcessAlone: alone(samples[index]!.inProcessAlone),
      httpAlone: alone(samples[index]!.httpAlone),
      variantMedians: query.variants.map((variant, v) => ({
        variant: variant.describe,
        ms: ms(median(samples[index]!.inProcessAlone.byVariant[v] ?? []), 2),
      })),
      slowestVariant: slowestOf(samples[index]!.inProcessAlone),
    }));
    for (const [index, result] of results.entries()) {
      ctx.progress(
        `${result.id}: in process p50 ${result.inProcess.p50} p95 ${result.inProcess.p95} ms (alone ${result.inProcessAlone.p50}), Node ${result.inProcess.cpuUs.self} µs + PG ${result.inProcess.cpuUs.postgres} µs; ` +
          `HTTP p50 ${result.http.p50} p95 ${result.http.p95} ms (alone ${result.httpAlone.p50}), API ${result.http.cpuUs.api} µs + PG ${result.http.cpuUs.postgres} µs, ${result.http.kilobytesPerResponse} KB; other cores ${result.inProcess.otherCores}/${result.http.otherCores}`,
      );
      for (const [engine, sample] of [
        ['in process', samples[index]!.inProcess],
        ['HTTP', samples[index]!.http],
      ] as const) {
        if (sample.errors) problems.push(`${result.id} ${engine}: ${sample.errors} errors (${[...sample.errorMessages].join('; ')})`);
      }
    }

    // Which plans the pool's connections settled on: postgres.js prepares every statement, and after
    // 5 runs a connection may keep the generic plan. Every connection is reserved at once to read it.
    const reserved = await Promise.all(Array.from({ length: POOL_SIZE }, () => sql.reserve()));
    const planCache = new Map<
      string,
      { statement: string; connections: number; genericConnections: number; genericRuns: number; customRuns: number }
    >();
    try {
      for (const connection of reserved) {
        const rows = await connection<{ statement: string; generic: number; custom: number }[]>`
          select statement, generic_plans::int as generic, custom_plans::int as custom from pg_prepared_statements
          where statement ~ 'from summar(ies|y_facets)'`;
        // One statement text may be prepared more than once on a connection (other parameter types).
        const mine = new Map<string, { generic: number; custom: number }>();
        for (const row of rows) {
          const key = row.statement.replace(/\s+/g, ' ').trim();
          const seen = mine.get(key) ?? { generic: 0, custom: 0 };
          mine.set(key, { generic: seen.generic + row.generic, custom: seen.custom + row.custom });
        }
        for (const [key, used] of mine) {
          const entry = planCache.get(key) ?? { statement: key, connections: 0, genericConnections: 0, genericRuns: 0, customRuns: 0 };
          entry.connections += 1;
          if (used.generic > 0) entry.genericConnections += 1;
          entry.genericRuns += used.generic;
          entry.customRuns += used.custom;
          planCache.set(key, entry);
        }
      }
    } finally {
      for (const connection of reserved) connection.release();
    }
    const plansUsed = [...planCache.values()].sort((a, b) => b.genericRuns - a.genericRuns);

    // Plans of every query whose class missed the p95 target in process (its slowest variant) or over HTTP.
    const explained: Array<{
      id: string;
      variant: string;
      p95InProcess: number | null;
      p95Http: number | null;
      aloneMedianMs: number | null;
      timings: PlanTiming[];
      plan: string;
    }> = [];
    for (const [index, query] of classes.entries()) {
      const result = results[index]!;
      if ((result.inProcess.p95 ?? Infinity) <= TARGET.p95Ms && (result.http.p95 ?? Infinity) <= TARGET.p95Ms) continue;
      const variant = query.variants[result.slowestVariant]!;
      const { plan, timings } = await explainCall(db.url, (pool) => query.inProcess(pool, variant)).catch((error: Error) => ({
        plan: `EXPLAIN failed: ${error.message}`,
        timings: [],
      }));
      explained.push({
        id: query.id,
        variant: variant.describe,
        p95InProcess: result.inProcess.p95,
        p95Http: result.http.p95,
        aloneMedianMs: result.variantMedians[result.slowestVariant]?.ms ?? null,
        timings,
        plan,
      });
    }
    return { build, results, explained, plansUsed, measureSeconds, problems };
  } finally {
    http?.close();
    await api?.stop();
    await buildSql.end({ timeout: 5 });
  }
}

// ---------------------------------------------------------------------------------------------------
// The benchmark

async function run(ctx: BenchContext) {
  const started = performance.now();
  const vocabulary = loadVocabulary();
  const words = topicWords(vocabulary);
  const sets = transcriptSets(words);
  ctx.progress(
    `vocabulary from ${vocabulary.source === 'built-in' ? 'the built-in list' : `the trending datasets (${vocabulary.files.join(', ')})`}: ${words.length} topic words; transcripts: ${sets.map((set) => `${set.spec.id} ${set.words} words in ${set.cues} cues`).join(', ')} (${round(elapsed(started), 1)} s)`,
  );
  const offline = PARTS.has('offline') ? await measureOffline(ctx, sets) : undefined;
  const llm = PARTS.has('llm') ? await measureLlm(ctx, sets) : undefined;
  let reading: Awaited<ReturnType<typeof measureReading>> | undefined;
  if (PARTS.has('reading')) {
    // Stored texts: what the offline generator wrote for this benchmark's own transcripts.
    let templates = offline?.outputs ?? [];
    if (templates.length === 0) {
      const generator = createExtractiveGenerator();
      for (const set of sets) for (const input of set.inputs) templates.push(await generator.summarise(input));
    }
    templates = templates.slice(0, 12);
    reading = await measureReading(ctx, vocabulary, templates);
  }
  return { vocabulary: { source: vocabulary.source, files: vocabulary.files, topicWords: words.length }, sets, offline, llm, reading };
}

/** The offline generator's median for 30-minute transcripts; every judged reading class's p95, in process and over HTTP. */
function summariesTargets(outcome: Awaited<ReturnType<typeof run>>): Target[] {
  const targets: Target[] = [];
  for (const id of ['auto-30min', 'manual-30min']) {
    const result = outcome.offline?.results.find((r) => r.id === id);
    if (result)
      targets.push(
        target(`offline summary of a 30-minute transcript, ${id}, median (ms)`, result.medianMs, { atMost: TARGET.offlineMedianMs }),
      );
  }
  for (const r of outcome.reading?.results.filter((result) => result.judged) ?? []) {
    targets.push(target(`${r.id} p95 in process (ms)`, r.inProcess.p95, { atMost: TARGET.p95Ms }));
    targets.push(target(`${r.id} p95 over HTTP (ms)`, r.http.p95, { atMost: TARGET.p95Ms }));
  }
  return targets;
}

export const benchmark: Benchmark = {
  name: 'summaries',
  title: "AI summaries: offline generator, the LLM path's own overhead, reading at 100,000 summaries",
  description:
    'The built-in extractive generator on generated 30-minute and 2-hour transcripts (auto- and manual-caption style; ms per summary on one core, peak RSS of a process doing only that); ' +
    `the LLM path (createLlmSummaryGenerator over createLlmClient, contextTokens ${LLM.contextTokens}) against the OpenAI-compatible stand-in answering at once in its own process, split into the service's CPU and the stand-in's; ` +
    `and a fresh database of ${SUMMARIES.toLocaleString('en')} public ready summaries (plus private, failed and generating ones) built with set-based SQL through the counts trigger, ` +
    `read by browseSummaries (no filter, by tag, channel, language, tag + language, deep pages), latest, summaryTags, summaryLanguages and summaryChannels at ${CLIENTS} concurrent clients, in process and over HTTP (GET /api/summary/*, anonymous, \`afterimage api\` in its own process). ` +
    `Targets: a 30-minute transcript summarised offline in ≤ ${TARGET.offlineMedianMs} ms (median); browse, latest and tags p95 ≤ ${TARGET.p95Ms} ms at 100,000 summaries.`,
  async run(ctx) {
    const outcome = await run(ctx);
    const problems = outcome.reading?.problems ?? [];
    return {
      parameters: {
        seed: SEED,
        parts: [...PARTS],
        offline: { specs: SPECS, transcriptsPerSize: TRANSCRIPTS_PER_SIZE, warmupSummaries: WARMUP_SUMMARIES },
        llm: { ...LLM, runs: LLM_RUNS, standInLatencyMs: 0, retries: 0 },
        reading: {
          summaries: SUMMARIES,
          channels: CHANNELS,
          languages: LANGUAGE_MIX,
          privateOnPublicVideos: PRIVATE_ON_PUBLIC,
          privateOnly: PRIVATE_ONLY,
          failed: FAILED,
          generating: GENERATING,
          clients: CLIENTS,
          poolSize: POOL_SIZE,
          pageSize: PAGE_SIZE,
          rounds: ROUNDS,
          requestsPerRound: REQUESTS_PER_ROUND,
          roundSecondsCap: ROUND_SECONDS,
          warmupRequests: WARMUP_REQUESTS,
        },
        targets: TARGET,
      },
      results: {
        vocabulary: outcome.vocabulary,
        transcripts: outcome.sets.map((set) => ({ id: set.spec.id, words: set.words, cues: set.cues })),
        offline: outcome.offline?.results ?? null,
        llm: outcome.llm ? { results: outcome.llm.results, pieces: outcome.llm.micro, minimalCalls: outcome.llm.minimalCalls } : null,
        reading: outcome.reading
          ? {
              build: outcome.reading.build,
              queries: outcome.reading.results,
              plansUsed: outcome.reading.plansUsed,
              explained: outcome.reading.explained,
              measureSeconds: round(outcome.reading.measureSeconds, 1),
            }
          : null,
      },
      targets: summariesTargets(outcome),
      ok: problems.length === 0,
      problems,
    };
  },
};
