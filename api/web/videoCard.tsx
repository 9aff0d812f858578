import type { VNode } from 'preact';
import { clock } from '../../core/text/clock.ts';
import { THUMBNAIL_WIDTHS, thumbnailHeight, type ThumbnailWidth } from '../../core/videos/thumbnailImage.ts';
import type { VideoObject } from '../../core/videos/videoObject.ts';
import { deletedOn, StatusBadge } from './statusBadge.tsx';

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
  const facts = [video.uploadDate && `uploaded ${video.uploadDate}`, video.duration === null ? null : `duration ${clock(video.duration)}`]
    .filter(Boolean)
    .join(' · ');
  return (
    <li class="card" data-video-id={video.videoId}>
      <Thumbnail video={video} {...LIST_THUMBNAIL} />
      <h3>
        <a href={`/videos/${video.videoId}`}>{video.title ?? `Video ${video.videoId} (title unknown)`}</a>
      </h3>
      <p>
        <StatusBadge status={video.status} reason={video.statusReason} /> {deletedOn(video)}{' '}
        {facts ? <span class="muted">{facts}</span> : null}
      </p>
    </li>
  );
}
