/**
 * How good the offline summaries are, not how fast: the generator against the hand-written evaluation
 * set of real transcripts (test/kit/summaryReferences.ts, scored by test/kit/summaryEvaluation.ts): the
 * share of its tags a person would accept, and of a person's key moments it has a key point for.
 */
import { createExtractiveGenerator } from '../../../core/summaries/offline/createExtractiveGenerator.ts';
import { haveRealFixtures, missingRealFixtures } from '../../../test/kit/realFixtures.ts';
import { evaluateGenerator } from '../../../test/kit/summaryEvaluation.ts';
import type { BenchContext } from '../lib/harness.ts';
import { round } from '../lib/stats.ts';

/** The generator before issue 31.5 (commit 4da4adf), scored on the same set the same way. */
const BEFORE = { tagPrecision: 0.61, momentCoverage: 0.48 };

export async function measureQuality(ctx: BenchContext) {
  if (!haveRealFixtures()) {
    ctx.progress(missingRealFixtures('the quality part'));
    return undefined;
  }
  const evaluation = await evaluateGenerator(createExtractiveGenerator());
  ctx.progress(`quality: tag precision ${round(evaluation.tagPrecision, 2)}, key-moment coverage ${round(evaluation.momentCoverage, 2)}`);
  return {
    before: BEFORE,
    tagPrecision: round(evaluation.tagPrecision, 2)!,
    momentCoverage: round(evaluation.momentCoverage, 2)!,
    transcripts: evaluation.scores.map((score) => ({
      file: score.file,
      language: score.language,
      kind: score.kind,
      tagPrecision: round(score.tagPrecision, 2),
      momentCoverage: round(score.momentCoverage, 2),
      tags: score.tags,
      wrongTags: score.wrongTags,
      missedMoments: score.missedMoments,
    })),
  };
}
