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
 *   quality  the offline generator on the hand-written evaluation set of real transcripts (quality.ts).
 * Targets: a 30-minute transcript summarised offline in ≤ 200 ms (median); browse, latest and tags
 * p95 ≤ 20 ms at 100,000 summaries; tag precision ≥ 0.75 and key-moment coverage ≥ 0.65.
 * SUMMARIES_BENCH_PARTS=offline,llm,reading,quality picks parts.
 */
import { createExtractiveGenerator } from '../../../core/summaries/offline/createExtractiveGenerator.ts';
import { loadVocabulary } from '../../../test/kit/corpus-vocabulary.ts';
import { topicWords } from '../lib/corpus.ts';
import { type BenchContext, type Benchmark, target, type Target } from '../lib/harness.ts';
import { round, secondsSince } from '../lib/stats.ts';
import { measureLlm } from './llm.ts';
import { measureOffline, transcriptSets } from './offline.ts';
import { measureQuality } from './quality.ts';
import { measureReading } from './reading.ts';
import {
  CHANNELS,
  CLIENTS,
  FAILED,
  GENERATING,
  LANGUAGE_MIX,
  LLM,
  LLM_RUNS,
  PAGE_SIZE,
  PARTS,
  POOL_SIZE,
  PRIVATE_ONLY,
  PRIVATE_ON_PUBLIC,
  REQUESTS_PER_ROUND,
  ROUNDS,
  ROUND_SECONDS,
  SEED,
  SPECS,
  SUMMARIES,
  TARGET,
  TRANSCRIPTS_PER_SIZE,
  WARMUP_REQUESTS,
  WARMUP_SUMMARIES,
} from './shape.ts';

async function run(ctx: BenchContext) {
  const started = performance.now();
  const vocabulary = loadVocabulary();
  const words = topicWords(vocabulary);
  const sets = transcriptSets(words);
  ctx.progress(
    `vocabulary from ${vocabulary.source === 'built-in' ? 'the built-in list' : `the trending datasets (${vocabulary.files.join(', ')})`}: ${words.length} topic words; transcripts: ${sets.map((set) => `${set.spec.id} ${set.words} words in ${set.cues} cues`).join(', ')} (${round(secondsSince(started), 1)} s)`,
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
  const quality = PARTS.has('quality') ? await measureQuality(ctx) : undefined;
  return {
    vocabulary: { source: vocabulary.source, files: vocabulary.files, topicWords: words.length },
    sets,
    offline,
    llm,
    reading,
    quality,
  };
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
  if (outcome.quality) {
    targets.push(target('tag precision on the evaluation set', outcome.quality.tagPrecision, { atLeast: TARGET.tagPrecision }));
    targets.push(target('key-moment coverage on the evaluation set', outcome.quality.momentCoverage, { atLeast: TARGET.momentCoverage }));
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
    `read by browseSummaries (no filter, by tag, channel, language, tag + language, tag + channel, channel + language, all three, deep pages of all and of a tag), latest, summaryTags, summaryLanguages and summaryChannels at ${CLIENTS} concurrent clients, in process and over HTTP (GET /api/summary/*, anonymous, \`afterimage api\` in its own process). ` +
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
        quality: outcome.quality ?? null,
      },
      targets: summariesTargets(outcome),
      ok: problems.length === 0,
      problems,
    };
  },
};
