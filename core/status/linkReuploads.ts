/**
 * Re-upload linking: a gone video whose content lives on under another id. Candidates are live
 * videos with a similar title (trigram similarity of the normalised titles, served by an index)
 * and a duration within DURATION_SLACK seconds, uploaded no earlier than the gone one. When both
 * have a transcript, their words must agree too. The best candidate at or above MIN_SCORE wins:
 * the gone video becomes re-uploaded and links to it, the new one links back.
 */
import type { Queryable } from '../db/database.ts';
import { foldText } from '../subtitles/match.ts';
import { readCues } from '../subtitles/tracks.ts';
import { announceStatusChanges } from './recordObservations.ts';

const DURATION_SLACK = 2;
const MIN_TITLE_SIMILARITY = 0.5;
const MIN_SCORE = 0.75;
/** Words of a transcript compared (its start): enough to tell two talks apart, cheap to read. */
const TRANSCRIPT_WORDS = 3_000;

interface Candidate {
  goneId: string;
  candidateId: string;
  titleSimilarity: number;
  durationDelta: number;
  goneTrack: string | null;
  candidateTrack: string | null;
}

/** Word-trigram overlap (Jaccard) of two texts, 0..1. */
function transcriptSimilarity(a: string, b: string): number {
  const shingles = (text: string) => {
    const words = foldText(text)
      .split(/[^\p{L}\p{N}]+/u)
      .filter(Boolean)
      .slice(0, TRANSCRIPT_WORDS);
    const set = new Set<string>();
    for (let i = 0; i + 2 < words.length; i++) set.add(`${words[i]} ${words[i + 1]} ${words[i + 2]}`);
    return set;
  };
  const left = shingles(a);
  const right = shingles(b);
  if (left.size === 0 || right.size === 0) return 0;
  let shared = 0;
  for (const shingle of left) if (right.has(shingle)) shared++;
  return shared / (left.size + right.size - shared);
}

export async function linkReuploads(
  tx: Queryable,
  videoIds: string[],
): Promise<Array<{ videoId: string; reuploadedAs: string; score: number }>> {
  const candidates = await tx<Candidate[]>`
    select g.video_id as "goneId", c.video_id as "candidateId", similarity(lower(g.title), lower(c.title)) as "titleSimilarity",
      abs(g.duration_seconds - c.duration_seconds) as "durationDelta",
      gt.track_id::text as "goneTrack", ct.track_id::text as "candidateTrack"
    from videos g
    join lateral (
      select c.* from videos c
      where lower(c.title) % lower(g.title) and c.video_id <> g.video_id and c.status = 'live' and c.reupload_of is null
        and c.duration_seconds between g.duration_seconds - ${DURATION_SLACK} and g.duration_seconds + ${DURATION_SLACK}
        and (c.upload_date is null or g.upload_date is null or c.upload_date >= g.upload_date)
      order by similarity(lower(c.title), lower(g.title)) desc limit 5
    ) c on true
    left join transcripts gt on gt.video_id = g.video_id and gt.state = 'completed'
    left join transcripts ct on ct.video_id = c.video_id and ct.state = 'completed'
    where g.video_id = any(${videoIds}) and g.status in ('deleted', 're-uploaded') and g.reuploaded_as is null
      and g.title is not null and g.duration_seconds is not null`;
  const trackIds = [...new Set(candidates.flatMap((c) => (c.goneTrack && c.candidateTrack ? [c.goneTrack, c.candidateTrack] : [])))];
  const cues = trackIds.length ? await readCues(tx, trackIds) : new Map();
  const textOf = (trackId: string) => (cues.get(trackId) ?? []).map((cue: { text: string }) => cue.text).join(' ');

  const best = new Map<string, { candidateId: string; score: number; evidence: Record<string, unknown> }>();
  for (const candidate of candidates) {
    if (candidate.titleSimilarity < MIN_TITLE_SIMILARITY) continue;
    const durationScore = 1 - candidate.durationDelta / (DURATION_SLACK + 1);
    const bothTranscribed = candidate.goneTrack !== null && candidate.candidateTrack !== null;
    const words = bothTranscribed ? transcriptSimilarity(textOf(candidate.goneTrack!), textOf(candidate.candidateTrack!)) : null;
    // With transcripts on both sides the words decide most; without, title and duration must carry it.
    const score =
      words === null
        ? 0.8 * candidate.titleSimilarity + 0.2 * durationScore
        : 0.3 * candidate.titleSimilarity + 0.1 * durationScore + 0.6 * words;
    if (score < MIN_SCORE || (best.get(candidate.goneId)?.score ?? 0) >= score) continue;
    best.set(candidate.goneId, {
      candidateId: candidate.candidateId,
      score,
      evidence: {
        titleSimilarity: round(candidate.titleSimilarity),
        durationDeltaSeconds: candidate.durationDelta,
        transcriptSimilarity: words === null ? null : round(words),
      },
    });
  }
  const linked: Array<{ videoId: string; reuploadedAs: string; score: number }> = [];
  for (const [goneId, match] of best) {
    const summary = `re-uploaded as ${match.candidateId} (score ${round(match.score)}: ${JSON.stringify(match.evidence)})`;
    const [updated] = await tx`
      update videos set status = 're-uploaded', reuploaded_as = ${match.candidateId}, reupload_score = ${match.score},
        reupload_evidence = ${JSON.stringify(match.evidence)}::text::jsonb, status_source = 'reupload_link', status_evidence = ${summary}
      where video_id = ${goneId} and reuploaded_as is null returning video_id`;
    if (!updated) continue;
    await tx`update videos set reupload_of = ${goneId}, reupload_score = ${match.score}, reupload_evidence = ${JSON.stringify(match.evidence)}::text::jsonb where video_id = ${match.candidateId}`;
    linked.push({ videoId: goneId, reuploadedAs: match.candidateId, score: round(match.score) });
  }
  await announceStatusChanges(
    tx,
    linked.map((link) => link.videoId),
  );
  return linked;
}

const round = (value: number) => Math.round(value * 1000) / 1000;
