import type { Queryable } from '../db/database.ts';
import { countVideo, cueJson, cuesInBatches, matchList, matchesOf, startTotals, videoFields, type BulkPlan } from './bulk.ts';
import type { OutputFormat } from './cue.ts';
import { render } from './render.ts';
import { describeTrack } from './tracks.ts';

/** json: each video's cues (marked match: true with a query); srt, vtt or txt: each video's text in that format. */
type BulkJsonFormat = 'json' | OutputFormat;

export interface BulkJsonOptions {
  format: BulkJsonFormat;
  query?: string | undefined;
}

/**
 * The bulk answer as one JSON document {format, query, videos, missing, totals}, in pieces: the opening,
 * one piece per video (its cues read a page of videos at a time), the closing with the totals.
 */
export async function* bulkJson(sql: Queryable, plan: BulkPlan, options: BulkJsonOptions): AsyncGenerator<string> {
  const { format, query } = options;
  yield `{"format":${JSON.stringify(format)},"query":${JSON.stringify(query ?? null)},"videos":[`;
  const totals = startTotals(plan);
  let first = true;
  for await (const { entry, cues } of cuesInBatches(sql, plan.planned)) {
    const matched = matchesOf(cues, query);
    const base = { ...videoFields(entry.video), track: describeTrack(entry.track) };
    const video =
      format === 'json'
        ? { ...base, cues: cues.map((cue, index) => cueJson(cue, matched.has(index))), ...(query ? { matchCount: matched.size } : {}) }
        : { ...base, text: render(cues, format), ...matchList(cues, matched, query) };
    countVideo(totals, entry, cues, matched);
    yield `${first ? '' : ','}${JSON.stringify(video)}`;
    first = false;
  }
  yield `],"missing":${JSON.stringify(plan.missing)},"totals":${JSON.stringify(totals)}}`;
}
