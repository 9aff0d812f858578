import { z } from 'zod';
import type { Sql } from '../db/database.ts';
import { AppError } from '../errors.ts';
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
 * database), a page of them in the requested order, each with its first matching cues: one statement reads
 * the page and its tracks' cue lines (sql/020_subtitle_cues_json.sql).
 */
export async function searchSubtitles(
  sql: Sql,
  request: FtsRequest,
  timeoutMs: number,
): Promise<FtsPage & { cues: Map<string, { cues: SubtitleHit[]; cueMatches: number }> }> {
  const rows = await sql
    .begin(async (tx) => {
      await tx.unsafe(`set local statement_timeout = ${timeoutMs}`);
      return tx<{ videoId: string; cueLines: string | null; total: number }[]>`
      with m as materialized (
        select video_id, t.track_id, t.fts, view_count, upload_date, duration_seconds
        from transcripts t join videos v using (video_id), (select ${tsquery(tx, request.query)} as q) query
        where t.fts @@ q and ${filterClause(tx, request.filters)}
        limit ${MAX_RESULT_WINDOW + 1}
      )
      select page.video_id as "videoId", s.cue_lines as "cueLines", page.total
      from (
        select video_id, track_id, count(*) over ()::int as total, row_number() over (order by ${tx.unsafe(ORDER[request.sort])}) as position
        from m, (select ${tsquery(tx, request.query)} as q) query
        order by ${tx.unsafe(ORDER[request.sort])} offset ${request.offset} limit ${request.limit}
      ) page join subtitle_tracks s on s.id = page.track_id
      order by page.position`;
    })
    .catch((error: { code?: string }) => {
      if (error.code !== '57014') throw error;
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        `the subtitle search took longer than ${timeoutMs} ms and was stopped; add words or filters to narrow it`,
      );
    });
  const total = rows[0]?.total ?? (request.offset > 0 ? await countMatches(sql, request) : 0);
  const mark = highlighter(request.query);
  const cues = new Map(rows.map((row) => [row.videoId, matchingCues(row.videoId, row.cueLines ?? '', mark)]));
  return { videoIds: rows.map((row) => row.videoId), total, totalExact: total <= MAX_RESULT_WINDOW, cues };
}

/**
 * The cues of a track's cue lines ("startMs endMs text", one per line) that hold a word searched for: the
 * words are found in all the lines at once, then each hit is placed in its line.
 */
function matchingCues(videoId: string, cueLines: string, mark: ReturnType<typeof highlighter>) {
  const shown: SubtitleHit[] = [];
  let cueMatches = 0;
  let lineStart = 0;
  let lineEnd = -1;
  let counted = -1;
  for (const hit of mark.hitsInLines(cueLines)) {
    while (hit.start > lineEnd) {
      if (lineEnd !== -1) lineStart = lineEnd + 1;
      const next = cueLines.indexOf('\n', lineStart);
      lineEnd = next === -1 ? cueLines.length : next;
    }
    const endAt = cueLines.indexOf(' ', lineStart);
    const textAt = cueLines.indexOf(' ', endAt + 1) + 1;
    // A hit in the times of the line is not one in its text.
    if (counted === lineStart || hit.start < textAt) continue;
    counted = lineStart;
    cueMatches += 1;
    if (shown.length === CUES_PER_VIDEO) continue;
    const startMs = Number(cueLines.slice(lineStart, endAt));
    shown.push({
      startMs,
      endMs: Number(cueLines.slice(endAt + 1, textAt - 1)),
      text: mark(cueLines.slice(textAt, lineEnd))!,
      url: `https://www.youtube.com/watch?v=${videoId}&t=${Math.floor(startMs / 1000)}s`,
    });
  }
  return { cueMatches, cues: shown };
}

/** The total for a page past the last match (whose rows cannot carry it). */
async function countMatches(sql: Sql, request: FtsRequest): Promise<number> {
  const [row] = await sql<{ total: number }[]>`
    select count(*)::int as total from (
      select 1 from transcripts t join videos v using (video_id)
      where t.fts @@ (${tsquery(sql, request.query)}) and ${filterClause(sql, request.filters)} limit ${MAX_RESULT_WINDOW + 1}) m`;
  return row!.total;
}
