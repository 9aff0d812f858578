/**
 * The transcript of a video: the one track summaries and stenograms build on (see chooseTrack),
 * with its state: none, pending (a fetch is queued or running), completed, failed.
 */
import type { Queryable } from '../db/database.ts';
import { chooseTrack, latestTracks, type TrackInfo, type TrackKind } from './tracks.ts';

export const transcriptStates = ['none', 'pending', 'completed', 'failed'] as const;
type TranscriptState = (typeof transcriptStates)[number];

export interface TranscriptInfo {
  state: TranscriptState;
  language: string | null;
  kind: TrackKind | null;
  version: number | null;
  trackId: string | null;
  error: string | null;
  requestedAt: Date | null;
  checkedAt: Date | null;
  updatedAt: Date | null;
}

const NONE: TranscriptInfo = {
  state: 'none',
  language: null,
  kind: null,
  version: null,
  trackId: null,
  error: null,
  requestedAt: null,
  checkedAt: null,
  updatedAt: null,
};

export async function readTranscript(sql: Queryable, videoId: string): Promise<TranscriptInfo> {
  const [row] = await sql<TranscriptInfo[]>`
    select tr.state, t.language, t.kind, t.version, tr.track_id::text as "trackId", tr.error,
      tr.requested_at as "requestedAt", tr.checked_at as "checkedAt", tr.updated_at as "updatedAt"
    from transcripts tr left join subtitle_tracks t on t.id = tr.track_id
    where tr.video_id = ${videoId}`;
  return row ?? NONE;
}

/** Marks the transcripts of these videos pending (a fetch was queued); completed ones stay completed. */
export async function markTranscriptsPending(tx: Queryable, videoIds: readonly string[]): Promise<void> {
  if (videoIds.length === 0) return;
  await tx`
    insert into transcripts as tr (video_id, state, requested_at)
    select id, 'pending', now() from unnest(${videoIds as string[]}::text[]) as id
    on conflict (video_id) do update set
      state = case when tr.state = 'completed' then 'completed' else 'pending' end,
      requested_at = now(), updated_at = now()`;
}

export interface FetchOutcome {
  /** A fetch finished (every source answered, or this was its last attempt). */
  checked: boolean;
  /** Why the fetch failed, when it did (used only when no track is known). */
  failure?: string;
}

/**
 * Chooses the transcript again from the newest versions of the video's tracks. With a track it is
 * completed; without one, a finished fetch leaves it failed (with `failure`) or none, and
 * otherwise it stays as it is (pending while a fetch is still trying).
 */
export async function refreshTranscript(
  tx: Queryable,
  videoId: string,
  outcome: FetchOutcome = { checked: false },
): Promise<{ transcript: TranscriptInfo; track?: TrackInfo }> {
  const tracks = await latestTracks(tx, [videoId]);
  const [video] = await tx<{ language: string | null }[]>`select language from videos where video_id = ${videoId}`;
  if (!video) return { transcript: NONE };
  const chosen = chooseTrack(tracks, { videoLanguage: video.language });
  const checked = outcome.checked;
  if (chosen) {
    await tx`
      insert into transcripts as tr (video_id, state, track_id, checked_at)
      values (${videoId}, 'completed', ${chosen.id}, ${checked ? tx`now()` : null})
      on conflict (video_id) do update set state = 'completed', track_id = excluded.track_id, error = null,
        checked_at = coalesce(excluded.checked_at, tr.checked_at), updated_at = now()
      where tr.state is distinct from 'completed' or tr.track_id is distinct from excluded.track_id or excluded.checked_at is not null`;
  } else if (checked) {
    const state = outcome.failure ? 'failed' : 'none';
    await tx`
      insert into transcripts as tr (video_id, state, error, checked_at)
      values (${videoId}, ${state}, ${outcome.failure ?? null}, now())
      on conflict (video_id) do update set state = excluded.state, track_id = null, error = excluded.error, checked_at = now(), updated_at = now()`;
  }
  return { transcript: await readTranscript(tx, videoId), ...(chosen ? { track: chosen } : {}) };
}
