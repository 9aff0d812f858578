import { z } from 'zod';
import type { Queryable } from '../db/database.ts';
import { isoTimestamp } from '../db/isoTimestamp.ts';
import { notFound } from '../errors.ts';
import { statusObserver, statusReason, videoStatus } from '../videos/videoStatus.ts';

const historyEntry = z.object({
  status: videoStatus,
  previousStatus: videoStatus.nullable().describe('null on the first entry'),
  reason: statusReason.nullable(),
  claimant: z.string().nullable().describe('the copyright claimant, when the platform names one'),
  observedAt: z
    .string()
    .describe(
      'ISO 8601, UTC: when the probe or source observed it (an archive: when yt-dlp downloaded the video), so not always after the entry before',
    ),
  source: z.string().nullable().describe('youtube_api, watch_page, yt_dlp, archive, wayback, reupload_link or migration'),
  evidence: z
    .string()
    .nullable()
    .describe(
      'what the probe or source saw: the platform\'s message, a capture URL, the archive\'s file ("yt-dlp archive: <file name>"), the re-upload match',
    ),
  linkedVideoId: z.string().nullable().describe('the re-upload (on a re-uploaded entry)'),
});

const currentStatus = z.object({
  status: videoStatus,
  reason: statusReason.nullable(),
  claimant: z.string().nullable(),
  since: z.string(),
  checkedAt: z.string().nullable().describe('when a probe last answered definitely'),
  confirmedAt: z
    .string()
    .nullable()
    .describe("when a probe or source last observed what status says (the video object's statusConfirmedAt); null while checking"),
  confirmedBy: statusObserver.nullable().describe('the probe or source of that observation (statusConfirmedBy)'),
  nextCheckAt: z.string(),
  reuploadedAs: z.string().nullable(),
  reuploadOf: z.string().nullable(),
  reuploadScore: z.number().nullable(),
});

/** A video's current status and every change of it (GET /api/videos/:videoId/status-history, get_video_status_history). */
export const statusHistorySchema = z.object({
  videoId: z.string(),
  current: currentStatus,
  history: z.array(historyEntry),
});

/** The status and its history, oldest first; a video not stored is 404. */
export async function statusHistory(sql: Queryable, videoId: string): Promise<z.infer<typeof statusHistorySchema>> {
  const iso = (column: string) => sql.unsafe(isoTimestamp(column));
  const [video] = await sql<Array<{ videoId: string; current: z.infer<typeof currentStatus> }>>`
    select video_id as "videoId", json_build_object('status', status, 'reason', status_reason, 'claimant', status_claimant,
      'since', ${iso('status_since')}, 'checkedAt', ${iso('k.checked_at')}, 'nextCheckAt', ${iso('k.next_check_at')},
      'confirmedAt', ${iso('k.confirmed_at')}, 'confirmedBy', k.confirmed_by,
      'reuploadedAs', reuploaded_as, 'reuploadOf', reupload_of, 'reuploadScore', reupload_score) as current
    from videos v join video_checks k using (video_id) where video_id = ${videoId}`;
  if (!video) throw notFound(`no video ${videoId} is stored; a channel search finds a channel's videos`);
  const history = await sql<Array<z.infer<typeof historyEntry>>>`
    select status, previous_status as "previousStatus", reason, claimant, ${iso('observed_at')} as "observedAt", source, evidence,
      linked_video_id as "linkedVideoId"
    from video_status_history where video_id = ${videoId} order by id`;
  return {
    videoId: video.videoId,
    current: video.current,
    history: history.map((entry) => ({ ...entry, evidence: entry.evidence && shownEvidence(entry.evidence) })),
  };
}

/** The archive's file URLs (kept as provenance) name the server's folders: clients see the file's name only. */
function shownEvidence(evidence: string): string {
  return evidence.replace(/file:\/\/\S+/g, (url) => {
    const name = url.slice(url.lastIndexOf('/') + 1);
    try {
      return `yt-dlp archive: ${decodeURIComponent(name)}`;
    } catch {
      return `yt-dlp archive: ${name}`;
    }
  });
}
