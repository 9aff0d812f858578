import { z } from 'zod';
import type { Sql } from '../db/database.ts';
import { AppError } from '../errors.ts';
import { MAX_RESULT_WINDOW, type FtsPage, type FtsRequest } from './backend.ts';
import { highlighter } from './highlight.ts';
import { anyTerm, filterClause, ORDER as SORT_ORDER } from './postgres.ts';

/** Cues shown per video: one long talk must not fill a page. */
const CUES_PER_VIDEO = 3;

export const subtitleHit = z.object({
  startMs: z.number().int(),
  endMs: z.number().int(),
  text: z.string().describe('HTML-escaped, words searched for in <mark>…</mark>'),
  url: z.string().describe('the video at this second'),
});
export type SubtitleHit = z.infer<typeof subtitleHit>;

/** Matching windows read at most: past them a query is too broad to count exactly (its total is an estimate). */
const WINDOW_CAP = 50_000;

/** Candidates checked for excluded words window by window; more are checked against the excluded words' windows. */
const FEW_CANDIDATES = 200;

// Relevance counts the windows that mention the words, without length normalisation: a talk that says
// them often is about them.
const ORDER = { ...SORT_ORDER, relevance: 'mentions desc, view_count desc nulls last, video_id' };

/**
 * Videos whose transcript holds the query (Postgres, whichever backend searches metadata: cues stay in the
 * database), a page of them in the requested order, each with its first matching cues. One statement: the
 * transcript windows (sql/036_transcript_windows.sql) holding any word or phrase looked for, through their
 * GIN index; the videos among them with every group and none of the exclusions, filtered; the page; and the
 * cue lines of the page's matching windows (read by their keys), which give each hit's cue and time.
 */
export async function searchSubtitles(
  sql: Sql,
  request: FtsRequest,
  timeoutMs: number,
): Promise<FtsPage & { cues: Map<string, { cues: SubtitleHit[]; cueMatches: number }> }> {
  const { groups, excluded } = request.query;
  const order = sql.unsafe(ORDER[request.sort]);
  const rows = await sql
    .begin(async (tx) => {
      await tx.unsafe(`set local statement_timeout = ${timeoutMs}`);
      // With one group, every window found holds it; with more, a video must have a window of each.
      const groupFlags =
        groups.length > 1
          ? groups.map((group, i) => tx`, fts @@ ${anyTerm(tx, group)} as ${tx(`g${i}`)}`).reduce((a, b) => tx`${a} ${b}`)
          : tx``;
      const everyGroup =
        groups.length > 1 ? tx`having ${groups.map((_, i) => tx`bool_or(${tx(`g${i}`)})`).reduce((a, b) => tx`${a} and ${b}`)}` : tx``;
      // Few candidates: their own windows are checked (ts_match_vq is @@ that no index answers; through the GIN
      // index a common excluded word was a bitmap of most windows for every candidate: 2 s p95 at 5,000
      // transcripts). Many: the windows holding an excluded word are read once, through the index.
      const unwanted = excluded.length > 0 ? anyTerm(tx, excluded) : null;
      const noExclusion = unwanted
        ? tx`and case when (select count(*) from found) <= ${FEW_CANDIDATES}
            then not exists (select 1 from transcript_windows x where x.video_id = found.video_id and ts_match_vq(x.fts, ${unwanted}))
            else found.video_id not in (select x.video_id from transcript_windows x where x.fts @@ ${unwanted}) end`
        : tx``;
      return tx<{ videoId: string | null; cueLines: string | null; total: number; capped: boolean }[]>`
      with hit as materialized (
        select video_id, window_no ${groupFlags}
        from transcript_windows where fts @@ ${anyTerm(tx, groups.flat())}
        limit ${WINDOW_CAP + 1}
      ), found as (
        select video_id, count(*)::int as mentions from hit group by video_id ${everyGroup}
      ), m as materialized (
        select video_id, mentions, view_count, upload_date, duration_seconds
        from found join videos v using (video_id)
        where ${filterClause(tx, request.filters)} ${noExclusion}
        limit ${MAX_RESULT_WINDOW + 1}
      ), page as (
        select video_id, row_number() over (order by ${order}) as position from m order by ${order} offset ${request.offset} limit ${request.limit}
      ), lined as (
        select video_id, string_agg(w.lines, E'\n' order by w.window_no) as cue_lines
        from page join hit using (video_id) join transcript_windows w using (video_id, window_no)
        group by video_id
      )
      select page.video_id as "videoId", counted.total, counted.capped, lined.cue_lines as "cueLines"
      from (select (select count(*)::int from m) as total, (select count(*) from hit) > ${WINDOW_CAP} as capped) counted
      left join page on true left join lined on lined.video_id = page.video_id
      order by page.position`;
    })
    .catch((error: { code?: string }) => {
      if (error.code !== '57014') throw error;
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        `the subtitle search took longer than ${timeoutMs} ms and was stopped; add words or filters to narrow it`,
      );
    });
  const { total, capped } = rows[0]!;
  const page = rows.filter((row): row is typeof row & { videoId: string } => row.videoId !== null);
  const mark = highlighter(request.query);
  const cues = new Map(page.map((row) => [row.videoId, matchingCues(row.videoId, row.cueLines ?? '', mark)]));
  return { videoIds: page.map((row) => row.videoId), total, totalExact: !capped && total <= MAX_RESULT_WINDOW, cues };
}

/**
 * The cues of matching windows' lines ("startMs endMs text", one per line) that hold a word searched for:
 * the words are found in all the lines at once, then each hit is placed in its line.
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
