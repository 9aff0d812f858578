/** AI summaries; SUMMARIES_BENCH_PARTS picks the parts (offline, llm, reading, quality), SUMMARIES_BENCH_COUNT the summaries read. */
import { createExtractiveGenerator } from '../../../core/summaries/offline/createExtractiveGenerator.ts';
import { loadVocabulary } from '../../../test/kit/corpus-vocabulary.ts';
import { haveRealFixtures, missingRealFixtures } from '../../../test/kit/realFixtures.ts';
import { evaluateGenerator } from '../../../test/kit/summaryEvaluation.ts';
import { topicWords } from '../lib/corpus.ts';
import { type Benchmark, type BenchContext, target } from '../lib/harness.ts';
import { listKnob } from '../lib/knobs.ts';
import { round } from '../lib/stats.ts';
import { BUILD } from './build.ts';
import { LLM, measureLlm, measureOffline, SPECS, transcriptSets } from './offline.ts';
import { LOAD, measureReading } from './reading.ts';

const PARTS = new Set(listKnob('SUMMARIES_BENCH_PARTS', 'offline,llm,reading,quality'));
// Quality: the shares test/summaries/offline-real.test.ts holds the generator to.
const TARGET = { offlineMedianMs: 200, p95Ms: 20, tagPrecision: 0.75, momentCoverage: 0.65 };

async function measureQuality(ctx: BenchContext) {
  if (!haveRealFixtures()) {
    ctx.progress(missingRealFixtures('the quality part'));
    return null;
  }
  const evaluation = await evaluateGenerator(createExtractiveGenerator());
  const quality = { tagPrecision: round(evaluation.tagPrecision, 2), momentCoverage: round(evaluation.momentCoverage, 2) };
  ctx.progress(`quality: tag precision ${quality.tagPrecision}, key-moment coverage ${quality.momentCoverage}`);
  return quality;
}

export const benchmark: Benchmark = {
  name: 'summaries',
  title: "AI summaries: offline generator, the LLM path's own cost, reading at 100,000 summaries",
  description:
    'The built-in generator on generated 30-minute and 2-hour talks (auto and manual captions), in a process of its own; ' +
    'the LLM path against a local OpenAI-compatible stand-in answering at once (the service’s CPU per summary); ' +
    `${BUILD.summaries.toLocaleString('en')} public summaries read by browse (every filter combination, deep pages), latest, tags, ` +
    `languages and channels at ${LOAD.clients} clients, in process and over HTTP; the generator's quality on real transcripts.`,
  async run(ctx) {
    const problems: string[] = [];
    const vocabulary = loadVocabulary();
    const sets = transcriptSets(topicWords(vocabulary));
    const offline = PARTS.has('offline') ? await measureOffline(ctx, sets) : null;
    const llm = PARTS.has('llm') ? await measureLlm(ctx, sets) : null;
    let reading = null;
    if (PARTS.has('reading')) {
      // Stored texts: what the offline generator writes for this benchmark's own transcripts.
      const generator = createExtractiveGenerator();
      const templates = await Promise.all(sets.flatMap((set) => set.inputs).map((input) => generator.summarise(input)));
      reading = await measureReading(ctx, vocabulary, templates, problems);
    }
    const quality = PARTS.has('quality') ? await measureQuality(ctx) : null;
    const targets = [
      ...(offline ?? [])
        .filter((result) => result.id.endsWith('30min'))
        .map((result) => target(`offline, ${result.id}, median (ms)`, result.wallMs.p50, { atMost: TARGET.offlineMedianMs })),
      ...(quality
        ? [
            target('tag precision on the evaluation set', quality.tagPrecision, { atLeast: TARGET.tagPrecision }),
            target('key-moment coverage on the evaluation set', quality.momentCoverage, { atLeast: TARGET.momentCoverage }),
          ]
        : []),
      ...(reading?.queries ?? [])
        .filter((query) => query.judged)
        .flatMap((query) => [
          target(`${query.id} p95 in process (ms)`, query.inProcess.loaded.p95, { atMost: TARGET.p95Ms }),
          target(`${query.id} p95 over HTTP (ms)`, query.http.loaded.p95, { atMost: TARGET.p95Ms }),
        ]),
    ];
    return {
      parameters: { parts: [...PARTS], offline: SPECS, llm: LLM, reading: { ...BUILD, ...LOAD }, targets: TARGET },
      results: { offline, llm, reading, quality },
      targets,
      ok: problems.length === 0,
      problems,
    };
  },
};
