import type { VNode } from 'preact';
import type { VideoObject } from '../../core/videos/videoObject.ts';
import type { StatusReason } from '../../core/videos/videoStatus.ts';

/** Why a video is gone, as a person reads it. */
const REASON_TEXT: Record<StatusReason, string> = {
  private: 'made private',
  removed_by_uploader: 'removed by the uploader',
  terms_of_service: 'removed for breaking the terms of service',
  copyright: 'removed after a copyright claim',
  account_terminated: 'the account was terminated',
  blocked_in_region: 'blocked in some regions',
  unknown: 'reason unknown',
};

/** A video's status as a badge: live, deleted (with why), re-uploaded (with where to), checking. */
export function StatusBadge({ video }: { video: Pick<VideoObject, 'status' | 'statusReason' | 'reuploadedAs'> }): VNode {
  const reason = video.statusReason ? REASON_TEXT[video.statusReason] : undefined;
  switch (video.status) {
    case 'live':
      return <span class="badge live">Live</span>;
    case 'deleted':
      return <span class="badge deleted">Deleted{reason ? `: ${reason}` : ''}</span>;
    case 're-uploaded':
      return (
        <span class="badge reuploaded">
          Re-uploaded
          {video.reuploadedAs ? (
            <>
              {' '}
              as <a href={`/videos/${video.reuploadedAs}`}>{video.reuploadedAs}</a>
            </>
          ) : null}
        </span>
      );
    default:
      return <span class="badge checking">Checking</span>;
  }
}
