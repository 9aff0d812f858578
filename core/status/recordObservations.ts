/**
 * Applies probe observations to videos in one statement (call inside a transaction):
 * - available: live (a gone or re-uploaded video is reinstated), suspicion cleared;
 * - gone, for a live or unverified video: suspected first; deleted only when a later probe, at
 *   least STATUS_CONFIRM_MINUTES after the first, agrees (the reason is the more specific of the two);
 * - gone, for a gone video: a more specific reason replaces "unknown"; rechecks come further apart;
 * - transient: nothing changes but the time of the next look.
 * A watched video (a watchlist item, or its channel's) is looked at again within a day whatever its
 * status, except a suspected deletion, whose confirmation probe keeps its time.
 * A definite answer agreeing with the status it leaves is the status's confirmation (confirmed_at/by).
 * A change is dated when the platform showed it (the observation's observedAt, else now): its
 * status_since, and so its history row. The history rows are written by the videos_status_history_* triggers; running crawls of the
 * videos' channels get search:status_change and the updated search:video; confirmed deletions and
 * rechecked gone videos queue a re-upload search. The answers of observations that suspected,
 * changed or confirmed a status are kept as evidence (core/evidence/); others that changed nothing are counted.
 */
import type { Queryable } from '../db/database.ts';
import { appendEvents, crawlStream } from '../events/events.ts';
import { countUnkeptObservations, keepObservations, type DecidingObservation } from './keepObservations.ts';
import { searchEvents, type SearchEvent } from '../events/searchEvents.ts';
import { enqueue } from '../jobs/enqueue.ts';
import { VIDEO_JSON, type VideoObject } from '../videos/videoObject.ts';
import type { Observation } from './observation.ts';

export interface StatusSchedule {
  /** How long after a first "gone" a second probe may confirm it. */
  confirmMinutes: number;
  /** Videos older than 30 days are rechecked about this often (±10 %, spread by id). */
  recheckDays: number;
}

export interface StatusChange {
  videoId: string;
  channelId: string;
  previousStatus: string;
  status: string;
  reason: string | null;
}

export async function recordObservations(
  tx: Queryable,
  observations: Observation[],
  schedule: StatusSchedule,
): Promise<{ changes: StatusChange[]; suspected: number }> {
  if (observations.length === 0) return { changes: [], suspected: 0 };
  const rows = JSON.stringify(
    observations.map((o) => ({
      video_id: o.videoId,
      outcome: o.outcome,
      reason: o.outcome === 'gone' ? o.reason : null,
      claimant: o.outcome === 'gone' ? (o.claimant ?? null) : null,
      source: o.source,
      evidence: o.evidence.slice(0, 2000),
      observed_at: o.observedAt?.toISOString() ?? null,
    })),
  );
  const rowsOut = await tx<
    Array<
      StatusChange & {
        suspectedNow: boolean;
        lookForReupload: boolean;
        stillGone: boolean;
        unchangedLive: boolean;
        suspectedAt: Date | null;
      }
    >
  >`
    with o as (
      select distinct on (video_id) * from jsonb_to_recordset(${rows}::text::jsonb)
        as o(video_id text, outcome text, reason text, claimant text, source text, evidence text, observed_at timestamptz)
    ), d as (
      select v.video_id, v.channel_id, v.status as previous_status, v.status_reason as previous_reason, v.status_claimant as previous_claimant,
        v.reuploaded_as, v.upload_date, k.suspected_reason, k.suspected_claimant, k.suspected_evidence, k.suspected_at, k.checks_while_gone,
        o.outcome, o.reason, o.claimant, o.source, o.evidence, coalesce(o.observed_at, now()) as observed_at,
        o.outcome = 'gone' and v.status in ('live', 'checking') as gone_from_live,
        o.outcome = 'gone' and v.status in ('live', 'checking') and k.suspected_at is not null
          and k.suspected_at <= coalesce(o.observed_at, now()) - make_interval(mins => ${schedule.confirmMinutes}) as confirmed,
        o.outcome = 'gone' and v.status in ('deleted', 're-uploaded') as still_gone,
        exists (select 1 from watchlist_items i where i.video_id = v.video_id)
          or exists (select 1 from watchlist_items i where i.channel_id = v.channel_id) as watched
      from o join videos v on v.video_id = o.video_id join video_checks k on k.video_id = o.video_id
      for update of v, k
    ), s as (
      select d.*,
        case when outcome = 'available' then 'live' when confirmed then 'deleted' else previous_status end as status,
        case
          when outcome = 'available' then null
          when confirmed then coalesce(nullif(reason, 'unknown'), suspected_reason, 'unknown')
          when still_gone and reason <> 'unknown' then reason
          else previous_reason end as status_reason,
        case
          when outcome = 'available' then null
          when confirmed then coalesce(claimant, suspected_claimant)
          when still_gone and reason <> 'unknown' then claimant
          else previous_claimant end as status_claimant
      from d
    ), status_written as (
      -- Only a real change touches videos (and, by trigger, the history): a check that confirms what is known writes the schedule alone.
      update videos v set status = s.status, status_reason = s.status_reason, status_claimant = s.status_claimant,
        status_source = s.source, status_since = s.observed_at,
        status_evidence = case when s.confirmed then concat_ws(' | then: ', s.suspected_evidence, s.evidence) else s.evidence end,
        reuploaded_as = case when s.outcome = 'available' then null else v.reuploaded_as end
      from s where v.video_id = s.video_id
        and (s.status, s.status_reason, s.status_claimant) is distinct from (s.previous_status, s.previous_reason, s.previous_claimant)
    ), schedule_written as (
      update video_checks k set
        suspected_reason = case when s.gone_from_live and not s.confirmed then coalesce(nullif(s.reason, 'unknown'), s.suspected_reason, s.reason)
          when s.outcome = 'transient' then s.suspected_reason end,
        suspected_claimant = case when s.gone_from_live and not s.confirmed then coalesce(s.claimant, s.suspected_claimant)
          when s.outcome = 'transient' then s.suspected_claimant end,
        suspected_evidence = case when s.gone_from_live and not s.confirmed then coalesce(s.suspected_evidence, s.evidence)
          when s.outcome = 'transient' then s.suspected_evidence end,
        suspected_at = case when s.gone_from_live and not s.confirmed then coalesce(s.suspected_at, s.observed_at)
          when s.outcome = 'transient' then s.suspected_at end,
        checks_while_gone = case when s.still_gone then s.checks_while_gone + 1 when s.outcome = 'transient' then s.checks_while_gone else 0 end,
        checked_at = case when s.outcome = 'transient' then k.checked_at else now() end,
        -- A definite answer that agrees with the status it leaves confirms it; a mere suspicion confirms nothing.
        confirmed_at = case when s.outcome = 'available' or s.confirmed or s.still_gone then now() else k.confirmed_at end,
        confirmed_by = case when s.outcome = 'available' or s.confirmed or s.still_gone then s.source else k.confirmed_by end,
        next_check_at = case
          when s.outcome = 'transient' then now() + interval '1 hour'
          when s.gone_from_live and not s.confirmed then coalesce(s.suspected_at, now()) + make_interval(mins => ${schedule.confirmMinutes})
          when s.confirmed then now() + interval '1 day'
          -- Watched videos (their own item or their channel's) daily; every later case is a day or more.
          when s.watched then now() + interval '1 day'
          -- Gone videos: 2, 4, 8 … days apart, at most the recheck window, so reinstatements are caught.
          when s.still_gone then now() + least(make_interval(days => ${schedule.recheckDays}), interval '1 day' * power(2, least(s.checks_while_gone + 1, 20)))
          when s.upload_date >= current_date - 30 then now() + interval '1 day'
          else now() + make_interval(days => ${schedule.recheckDays}) * (0.9 + 0.2 * (abs(hashtext(s.video_id)) % 1000) / 1000.0)
        end
      from s where k.video_id = s.video_id
    )
    select video_id as "videoId", channel_id as "channelId", previous_status as "previousStatus", status, status_reason as reason,
      (gone_from_live and not confirmed) as "suspectedNow",
      ((confirmed or still_gone) and reuploaded_as is null) as "lookForReupload",
      still_gone as "stillGone", (outcome = 'available' and previous_status = 'live') as "unchangedLive", suspected_at as "suspectedAt"
    from s`;

  const changes = rowsOut.filter((row) => row.status !== row.previousStatus);
  await keepDecidingAnswers(tx, observations, rowsOut, changes);
  const lookFor = rowsOut.filter((row) => row.lookForReupload).map((row) => row.videoId);
  if (lookFor.length) {
    await enqueue(tx, 'link_reuploads', { videoIds: lookFor }, { priority: 5 });
  }
  await announceStatusChanges(
    tx,
    changes.map((change) => change.videoId),
  );
  return {
    changes: changes.map(({ videoId, channelId, previousStatus, status, reason }) => ({
      videoId,
      channelId,
      previousStatus,
      status,
      reason,
    })),
    suspected: rowsOut.filter((row) => row.suspectedNow).length,
  };
}

/** What each observation decided, from the statement's rows: its answer kept, or counted when it decided nothing. */
async function keepDecidingAnswers(
  tx: Queryable,
  observations: Observation[],
  rows: Array<StatusChange & { suspectedNow: boolean; stillGone: boolean; unchangedLive: boolean; suspectedAt: Date | null }>,
  changes: StatusChange[],
): Promise<void> {
  const changedIds = new Set(changes.map((change) => change.videoId));
  const byVideo = new Map<string, Observation>();
  for (const observation of observations) if (!byVideo.has(observation.videoId)) byVideo.set(observation.videoId, observation);
  const kept: DecidingObservation[] = [];
  for (const row of rows) {
    const observation = byVideo.get(row.videoId);
    if (!observation?.answer) continue;
    const decided = row.suspectedNow
      ? 'suspected'
      : changedIds.has(row.videoId)
        ? 'status_change'
        : row.stillGone
          ? 'confirmation'
          : undefined;
    if (decided)
      kept.push({ videoId: row.videoId, source: observation.source, said: observation.evidence, decided, answer: observation.answer });
  }
  await keepObservations(
    tx,
    kept,
    rows.filter((row) => changedIds.has(row.videoId)).map((row) => ({ videoId: row.videoId, suspectedAt: row.suspectedAt })),
  );
  await countUnkeptObservations(
    tx,
    rows.filter((row) => row.unchangedLive).map((row) => row.videoId),
  );
}

/**
 * Tells the running crawls of these videos' channels (their open search streams) about the
 * videos' current status: search:status_change, then the whole video as search:video for clients
 * that merge videos by id. Called in the transaction that changed them.
 */
export async function announceStatusChanges(tx: Queryable, videoIds: string[]): Promise<void> {
  if (videoIds.length === 0) return;
  const rows = await tx<{ crawlId: string; video: VideoObject; previousStatus: VideoObject['status'] | null; since: Date }[]>`
    select cr.id::text as "crawlId", ${tx.unsafe(VIDEO_JSON)} as video, v.status_since as since,
      (select h.previous_status from video_status_history h where h.video_id = v.video_id order by h.id desc limit 1) as "previousStatus"
    from videos v join channels c on c.channel_id = v.channel_id join crawls cr on cr.channel_id = v.channel_id and cr.status = 'running'
    where v.video_id = any(${videoIds})`;
  const byCrawl = new Map<string, SearchEvent[]>();
  for (const row of rows) {
    const events = byCrawl.get(row.crawlId) ?? [];
    events.push(
      searchEvents.statusChange({
        videoId: row.video.videoId,
        previousStatus: row.previousStatus,
        status: row.video.status,
        reason: row.video.statusReason,
        since: row.since.toISOString(),
      }),
      searchEvents.video(row.video),
    );
    byCrawl.set(row.crawlId, events);
  }
  for (const [crawlId, events] of byCrawl) await appendEvents(tx, crawlStream(crawlId), events);
}
