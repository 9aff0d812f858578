import type { VNode } from 'preact';
import { clock } from '../../core/text/clock.ts';
import { THUMBNAIL_WIDTHS, thumbnailHeight, type ThumbnailWidth } from '../../core/videos/thumbnailImage.ts';
import type { VideoObject } from '../../core/videos/videoObject.ts';

const STATUS_WORDS: Record<VideoObject['status'], string> = {
  live: 'Live',
  deleted: 'Deleted',
  're-uploaded': 'Re-uploaded',
  checking: 'Checking',
};
const REASON_WORDS: Record<string, string> = {
  private: 'made private',
  removed_by_uploader: 'removed by the uploader',
  terms_of_service: 'terms of service',
  copyright: 'copyright claim',
  account_terminated: 'account terminated',
  blocked_in_region: 'blocked in a region',
  unknown: 'reason unknown',
};

/** A status as a person reads it: "Deleted · copyright claim". */
export const describeStatus = (status: VideoObject['status'], reason: string | null) =>
  reason && status !== 'live' && status !== 'checking'
    ? `${STATUS_WORDS[status]} · ${REASON_WORDS[reason] ?? reason}`
    : STATUS_WORDS[status];

/** A video's status as a badge (the class names of site.css: live, deleted, reuploaded, checking). */
export function StatusBadge({ status, reason }: { status: VideoObject['status']; reason: string | null }): VNode {
  return <span class={`badge ${status.replace('-', '')}`}>{describeStatus(status, reason)}</span>;
}

/**
 * The thumbnail this server keeps of a video, from the same origin at the widths of its srcset (the
 * browser picks by `sizes`); a neutral block where none is kept. Its title is beside it: no alt text.
 */
export function Thumbnail({
  video,
  width,
  sizes,
}: {
  video: Pick<VideoObject, 'thumbnailFileUrl'>;
  width: ThumbnailWidth;
  sizes: string;
}): VNode {
  if (!video.thumbnailFileUrl) return <span class="thumb thumb-none" aria-hidden="true" />;
  return (
    <img
      class="thumb"
      src={`${video.thumbnailFileUrl}?w=${width}`}
      srcset={THUMBNAIL_WIDTHS.map((each) => `${video.thumbnailFileUrl}?w=${each} ${each}w`).join(', ')}
      sizes={sizes}
      width={width}
      height={thumbnailHeight(width)}
      loading="lazy"
      alt=""
    />
  );
}

/** A list's thumbnail: 160 CSS pixels wide (site.css), 320 or 640 on denser screens. */
export const LIST_THUMBNAIL = { width: 160, sizes: '160px' } as const;

/** One video in a list, linking to its page; api/web/assets/channel.js builds the same markup for videos that arrive live. */
export function VideoCard({ video }: { video: VideoObject }): VNode {
  const facts = [video.uploadDate, video.duration === null ? null : clock(video.duration)].filter(Boolean).join(' · ');
  return (
    <li class="card" data-video-id={video.videoId}>
      <Thumbnail video={video} {...LIST_THUMBNAIL} />
      <h3>
        <a href={`/videos/${video.videoId}`}>{video.title ?? `Video ${video.videoId} (title unknown)`}</a>
      </h3>
      <p>
        <StatusBadge status={video.status} reason={video.statusReason} /> {facts ? <span class="muted">{facts}</span> : null}
      </p>
    </li>
  );
}
