/**
 * What the sources saw of videos' availability, each sighting at the time it was made: a crawl's
 * Data API listing (now), an archive's download (yt-dlp's epoch), a Wayback capture of a removal
 * notice (the capture's time). The newest observation that agrees with a video's status is its
 * confirmation (video_checks.confirmed_at/by, which the probes write too); an older sighting never
 * overrides a newer observation. A sighting:
 * - settles an unverified (checking) video, either way;
 * - live, and newer than the confirmation of a gone status, reinstates the video (as a probe's
 *   "available" does), clearing an older suspicion;
 * - deleted never changes a live video: one source's miss is for the probes to confirm;
 * - agreeing with the status, and newer, moves the confirmation only.
 * History rows (the videos_status_history_* triggers) carry the sighting's time, source and evidence.
 */
import type { Queryable } from '../db/database.ts';
import type { SourceName } from '../sources/types.ts';

export interface Sighting {
  videoId: string;
  availability: 'live' | 'deleted';
  /** ISO 8601; null: now. A time in the future counts as now. */
  observedAt: string | null;
  /** What the source read it from (a capture URL, an info.json's file URL): kept, shown only as statusEvidence allows. */
  evidence: string | null;
}

/** Records sightings of stored videos (call in the transaction that stored them); returns the videos whose status changed. */
export async function recordSightings(tx: Queryable, source: SourceName, sightings: Sighting[]): Promise<string[]> {
  if (sightings.length === 0) return [];
  const rows = JSON.stringify(
    sightings.map((s) => ({ video_id: s.videoId, availability: s.availability, observed_at: s.observedAt, evidence: s.evidence })),
  );
  const changed = await tx<{ videoId: string }[]>`
    with o as (
      select distinct on (video_id) video_id, availability, least(coalesce(observed_at, now()), now()) as observed_at, evidence
      from jsonb_to_recordset(${rows}::text::jsonb) as o(video_id text, availability text, observed_at timestamptz, evidence text)
      order by video_id, observed_at desc
    ), d as (
      select o.*, v.status as previous_status, k.suspected_at,
        k.confirmed_at is null or o.observed_at > k.confirmed_at as newer,
        case when o.availability = 'live' then v.status = 'live' else v.status in ('deleted', 're-uploaded') end as agrees
      from o join videos v using (video_id) join video_checks k using (video_id)
      for update of v, k
    ), s as (
      select d.*, case when not agrees and (previous_status = 'checking' or (availability = 'live' and newer)) then availability end as status
      from d
    ), status_written as (
      update videos v set status = s.status, status_reason = case when s.status = 'deleted' then 'unknown' end, status_claimant = null,
        status_source = ${source}, status_evidence = s.evidence, status_since = s.observed_at, reuploaded_as = null
      from s where v.video_id = s.video_id and s.status is not null
      returning v.video_id
    ), confirmation_written as (
      update video_checks k set confirmed_at = s.observed_at, confirmed_by = ${source},
        checks_while_gone = case when s.status = 'live' then 0 else k.checks_while_gone end,
        suspected_reason = case when s.availability = 'live' and k.suspected_at <= s.observed_at then null else k.suspected_reason end,
        suspected_claimant = case when s.availability = 'live' and k.suspected_at <= s.observed_at then null else k.suspected_claimant end,
        suspected_evidence = case when s.availability = 'live' and k.suspected_at <= s.observed_at then null else k.suspected_evidence end,
        suspected_at = case when s.availability = 'live' and k.suspected_at <= s.observed_at then null else k.suspected_at end
      from s where k.video_id = s.video_id and (s.status is not null or (s.agrees and s.newer))
    )
    select video_id as "videoId" from status_written`;
  return changed.map((row) => row.videoId);
}
