import { z } from 'zod';
import type { Sql } from '../db/database.ts';
import { AppError } from '../errors.ts';
import { readCues } from '../subtitles/tracks.ts';
import type { Cue } from '../subtitles/cue.ts';
import { MAX_RESULT_WINDOW, type FtsPage, type FtsRequest } from './backend.ts';
import { highlighter } from './highlight.ts';
import { filterClause, ORDER as SORT_ORDER, tsquery } from './postgres.ts';

/** Cues shown per video: one long talk must not fill a page. */
const CUES_PER_VIDEO = 3;

export const subtitleHit = z.object({
  startMs: z.number().int(),
  endMs: z.number().int(),
  text: z.string().describe('HTML-escaped, words searched for in <mark>…</mark>'),
  url: z.string().describe('the video at this second'),
});
export type SubtitleHit = z.infer<typeof subtitleHit>;

// Relevance counts mentions without length normalisation: a talk that says the words often is about them.
const ORDER = { ...SORT_ORDER, relevance: 'ts_rank(fts, q) desc, view_count desc nulls last, video_id' };

/**
 * Videos whose transcript holds the query (Postgres, whichever backend searches metadata: cues stay in the
 * database), a page of them in the requested order, each with its first matching cues.
 */
export async function searchSubtitles(sql: Sql, request: FtsRequest, timeoutMs: number): Promise<FtsPage & { cues: Map<string, { cues: SubtitleHit[]; cueMatches: number }> }> {
  const rows = await sql.begin(async (tx) => {
    await tx.unsafe(`set local statement_timeout = ${timeoutMs}`);
    return tx<{ videoId: string; trackId: string; total: number }[]>`
      with m as materialized (
        select video_id, t.track_id, t.fts, view_count, upload_date, duration_seconds
        from transcripts t join videos v using (video_id), (select ${tsquery(tx, request.query)} as q) query
        where t.fts @@ q and ${filterClause(tx, request.filters)}
        limit ${MAX_RESULT_WINDOW + 1}
      )
      select video_id as "videoId", track_id::text as "trackId", count(*) over ()::int as total
      from m, (select ${tsquery(tx, request.query)} as q) query
      order by ${tx.unsafe(ORDER[request.sort])} offset ${request.offset} limit ${request.limit}`;
  }).catch((error: { code?: string }) => {
    if (error.code !== '57014') throw error;
    throw new AppError('SERVICE_UNAVAILABLE', `the subtitle search took longer than ${timeoutMs} ms and was stopped; add words or filters to narrow it`);
  });
  const total = rows[0]?.total ?? (request.offset > 0 ? await countMatches(sql, request) : 0);
  const cuesByTrack = await readCues(sql, rows.map((row) => row.trackId));
  const mark = highlighter(request.query);
  const cues = new Map(rows.map((row) => [row.videoId, matchingCues(row.videoId, cuesByTrack.get(row.trackId) ?? [], mark)]));
  return { videoIds: rows.map((row) => row.videoId), total, totalExact: total <= MAX_RESULT_WINDOW, cues };
}

function matchingCues(videoId: string, cues: Cue[], mark: ReturnType<typeof highlighter>) {
  const matching = cues.filter((cue) => mark.matches(cue.text));
  return {
    cueMatches: matching.length,
    cues: matching.slice(0, CUES_PER_VIDEO).map((cue) => ({
      startMs: cue.startMs,
      endMs: cue.endMs,
      text: mark(cue.text)!,
      url: `https://www.youtube.com/watch?v=${videoId}&t=${Math.floor(cue.startMs / 1000)}s`,
    })),
  };
}

/** The total for a page past the last match (whose rows cannot carry it). */
async function countMatches(sql: Sql, request: FtsRequest): Promise<number> {
  const [row] = await sql<{ total: number }[]>`
    select count(*)::int as total from (
      select 1 from transcripts t join videos v using (video_id)
      where t.fts @@ (${tsquery(sql, request.query)}) and ${filterClause(sql, request.filters)} limit ${MAX_RESULT_WINDOW + 1}) m`;
  return row!.total;
}
