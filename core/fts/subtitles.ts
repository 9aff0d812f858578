import { z } from 'zod';
import type { Queryable, Sql } from '../db/database.ts';
import { AppError } from '../errors.ts';
import { MAX_RESULT_WINDOW, type FtsPage, type FtsRequest } from './backend.ts';
import { highlighter, type Highlight } from './highlight.ts';
import { anyTerm, filterClause, ORDER as SORT_ORDER, type Fragment } from './postgres.ts';
import type { Term } from './query.ts';

/** Cues shown per video: one long talk must not fill a page. */
const CUES_PER_VIDEO = 3;

export const subtitleHit = z.object({
  startMs: z.number().int(),
  endMs: z.number().int(),
  text: z.string().describe('HTML-escaped, words searched for in <mark>…</mark>'),
  url: z.string().describe('the video at this second'),
});
/** A matching cue as the search finds it, its text in parts (subtitleHit is how the API sends it). */
export type FoundCue = Omit<z.infer<typeof subtitleHit>, 'text'> & { text: Highlight };

/** Matching windows read at most: past them a query is too broad to count exactly (its total is an estimate). */
const WINDOW_CAP = 50_000;

/** Candidates whose own words are read for excluded words; for more, the videos saying them are looked up instead. */
const FEW_CANDIDATES = 200;

// Relevance counts the windows that mention the words, without length normalisation: a talk that says
// them often is about them.
const ORDER = { ...SORT_ORDER, relevance: 'mentions desc, view_count desc nulls last, video_id' };

/**
 * Videos whose transcript holds the query (Postgres, whichever backend searches metadata: cues stay in the
 * database), a page of them in the requested order, each with its first matching cues. One statement:
 * the videos with every group and none of the exclusions (exclusion()), filtered; the page; and the cue
 * lines of the page's matching windows, which give each hit's cue and time. The videos are found one of
 * two ways:
 * - by windows: the transcript windows (sql/036_transcript_windows.sql) holding any word or phrase looked
 *   for, through their GIN index, counted per video for relevance. A query matching more than WINDOW_CAP
 *   windows is answered from the first read.
 * - by words, when the order is not relevance and every term looked for is one word: the transcripts whose
 *   words (sql/042_transcript_words.sql) hold every group, one GIN lookup over a row a transcript. Exact
 *   however broad: a word said in most transcripts is millions of windows, and the newest of a sample of
 *   them is not the newest video saying it.
 */
export async function searchSubtitles(
  sql: Sql,
  request: FtsRequest,
  timeoutMs: number,
): Promise<FtsPage & { cues: Map<string, { cues: FoundCue[]; cueMatches: number }> }> {
  const { groups, excluded } = request.query;
  const order = sql.unsafe(ORDER[request.sort]);
  const byWords = request.sort !== 'relevance' && groups.flat().every((term) => term.tokens.length === 1);
  const rows = await sql
    .begin(async (tx) => {
      const unwanted = excluded.length > 0 ? exclusion(tx, excluded) : null;
      // Planned for each query's own words: a generic plan of this statement, reused for a word said in most
      // transcripts, read all its windows through their index to show 50 videos' cues (5 s at 20,000).
      // The words' GIN lookups must not become scans reading every transcript's words: the planner does not
      // count detoasting them (for a word said in most transcripts it chose the scan, 300–500 ms at 20,000).
      await tx.unsafe(
        `set local statement_timeout = ${timeoutMs}; set local plan_cache_mode = force_custom_plan${unwanted || byWords ? '; set local enable_seqscan = off' : ''}`,
      );
      const anyWanted = anyTerm(tx, groups.flat());
      return tx<{ videoId: string | null; cueLines: string | null; total: number; capped: boolean }[]>`
      with ${byWords ? foundByWords(tx, groups) : foundByWindows(tx, groups, anyWanted)} ${unwanted ?? tx``}, m as materialized (
        select video_id, mentions, windows, view_count, upload_date, duration_seconds
        from found join videos v using (video_id)
        where ${filterClause(tx, request.filters)} ${unwanted ? tx`and video_id not in (select video_id from unwanted)` : tx``}
        ${byWords ? tx`` : tx`limit ${MAX_RESULT_WINDOW + 1}`}
      ), page as (
        select video_id, windows, row_number() over (order by ${order}) as position from m order by ${order} offset ${request.offset} limit ${request.limit}
      ), lined as (
        select video_id, string_agg(w.lines, E'\n' order by w.window_no) as cue_lines
        from ${byWords ? pageWindows(tx, anyWanted) : tx`page cross join unnest(page.windows) as n (window_no) join transcript_windows w using (video_id, window_no)`}
        group by video_id
      )
      select page.video_id as "videoId", counted.total, counted.capped, lined.cue_lines as "cueLines"
      from (select (select count(*)::int from m) as total, ${byWords ? tx`false` : tx`(select count(*) from hit) > ${WINDOW_CAP}`} as capped) counted
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
  return { videoIds: page.map((row) => row.videoId), total, totalExact: byWords || (!capped && total <= MAX_RESULT_WINDOW), cues };
}

/**
 * `hit` and `found`: the windows holding any term looked for, and the videos with a window of each group,
 * with how many windows mention them (relevance) and which. The page's cues are read by those windows'
 * keys: joined to `hit` instead, a phrase of three words (estimated at one window) read every window
 * found and matched each against the page's videos one by one (13 of 20 ms at 20,000 transcripts).
 */
function foundByWindows(tx: Queryable, groups: Term[][], anyWanted: Fragment): Fragment {
  // With one group, every window found holds it; with more, a video must have a window of each.
  const groupFlags =
    groups.length > 1
      ? groups.map((group, i) => tx`, fts @@ ${anyTerm(tx, group)} as ${tx(`g${i}`)}`).reduce((a, b) => tx`${a} ${b}`)
      : tx``;
  const everyGroup =
    groups.length > 1 ? tx`having ${groups.map((_, i) => tx`bool_or(${tx(`g${i}`)})`).reduce((a, b) => tx`${a} and ${b}`)}` : tx``;
  return tx`hit as materialized (
      select video_id, window_no ${groupFlags}
      from transcript_windows where fts @@ ${anyWanted}
      limit ${WINDOW_CAP + 1}
    ), found as (
      select video_id, count(*)::int as mentions, array_agg(window_no) as windows from hit group by video_id ${everyGroup}
    )`;
}

/** `found`: the videos whose transcript's words hold every group (each a word or words), exactly; no order needs their mentions. */
function foundByWords(tx: Queryable, groups: Term[][]): Fragment {
  const everyGroup = groups.map((group) => anyTerm(tx, group)).reduce((a, b) => tx`${a} && ${b}`);
  return tx`found as materialized (
      select video_id, null::int as mentions, null::int[] as windows from transcript_words where words @@ (${everyGroup})
    )`;
}

/**
 * The page's windows holding a term looked for, read by their keys: through the windows' GIN index the
 * planner looked up the word again for each video of the page (17 ms of 28 for a word in 2,000 of 20,000
 * transcripts), and a word said in most transcripts is millions of windows.
 */
const pageWindows = (tx: Queryable, anyWanted: Fragment) =>
  tx`page join transcript_windows w using (video_id) where ts_match_vq(w.fts, ${anyWanted})`;

/**
 * `unwanted`: the videos saying an excluded term. A word: the candidates (`found`) whose transcript's words
 * (sql/042_transcript_words.sql) hold it; few candidates' own words are read, for more the transcripts saying
 * it are looked up through the words' GIN index. A phrase: the videos with a window holding it, read as a
 * search for it would read them (its words may be said apart, and a transcript's words keep no positions).
 */
function exclusion(tx: Queryable, excluded: Term[]): Fragment {
  const queries = excluded.map((term) => tx`select ${anyTerm(tx, [term])} as query`).reduce((a, b) => tx`${a} union all ${b}`);
  return tx`, term as materialized (${queries}), unwanted as (
      select w.video_id from found join transcript_words w using (video_id) cross join term
      where numnode(term.query) = 1 and (select count(*) from found) <= ${FEW_CANDIDATES} and ts_match_vq(w.words, term.query)
      union all
      select w.video_id from term join transcript_words w on w.words @@ term.query
      where numnode(term.query) = 1 and (select count(*) from found) > ${FEW_CANDIDATES}
      union all
      select x.video_id from term join transcript_windows x on x.fts @@ term.query where numnode(term.query) > 1
    )`;
}

/**
 * The cues of matching windows' lines ("startMs endMs text", one per line) that hold a word searched for:
 * the words are found in all the lines at once, then each hit is placed in its line.
 */
function matchingCues(videoId: string, cueLines: string, mark: ReturnType<typeof highlighter>) {
  const shown: FoundCue[] = [];
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
