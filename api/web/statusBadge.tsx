import type { VNode } from 'preact';
import { describeStatus, type StatusWord } from '../../core/videos/statusWording.ts';
import type { VideoObject } from '../../core/videos/videoObject.ts';
import type { StatusReason } from '../../core/videos/videoStatus.ts';

/** A status as a badge, worded by core/videos/statusWording.ts (class names of site.css: live, deleted, reuploaded, checking). */
export function StatusBadge({ status, reason }: { status: StatusWord; reason: StatusReason | null }): VNode {
  return <span class={`badge ${status.replace('-', '')}`}>{describeStatus(status, reason)}</span>;
}

/** A gone video's list fact: when it was deleted (its status's since); nothing for a live or checking one. */
export function deletedOn(video: Pick<VideoObject, 'status' | 'statusSince'>): VNode | null {
  if (video.status !== 'deleted' && video.status !== 're-uploaded') return null;
  return (
    <span class="fact deleted-on">
      deleted <time dateTime={video.statusSince}>{video.statusSince.slice(0, 10)}</time>
    </span>
  );
}
