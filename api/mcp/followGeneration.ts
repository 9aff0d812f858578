import { streamStart, type StoredEvent, type ProgressNote } from '../../core/events/events.ts';
import type { GenerationKind, GenerationRow } from '../../core/generations/generationKind.ts';
import { generationFollower } from '../sse/followStream.ts';
import type { EventHub } from '../sse/hub.ts';
import type { ToolExtra } from './tool.ts';

/** The longest a generate_* call waits for its job: below the 60 s a client waits for an answer by default. */
export const MAX_WAIT_SECONDS = 50;

/**
 * Follows a generation (as GET …/stream does): its milestones from the event log and the progress its
 * job announces, each forwarded as notifications/progress to the client's progress token, until the
 * final event, the client cancelling, or `waitSeconds`. Answers the final event, or undefined when it did not come in time.
 */
export function followGeneration(
  hub: EventHub,
  kind: GenerationKind<GenerationRow, never>,
  id: string,
  extra: ToolExtra,
  waitSeconds: number,
): Promise<StoredEvent | undefined> {
  const token = extra._meta?.progressToken;
  return new Promise((resolve) => {
    let sent = -1;
    const finish = (event: StoredEvent | undefined) => {
      clearTimeout(timer);
      extra.signal.removeEventListener('abort', onAbort);
      follower.unsubscribe();
      resolve(event);
    };
    const onAbort = () => finish(undefined);
    const timer = setTimeout(() => finish(undefined), waitSeconds * 1000);
    extra.signal.addEventListener('abort', onAbort);
    const notify = (event: ProgressNote) => {
      const { percent, stage } = event.payload as { percent?: number; stage?: string };
      // Progress must grow with every notification: repeats (a new stage at the same percent) are left out.
      if (token !== undefined && typeof percent === 'number' && percent > sent) {
        sent = percent;
        extra
          .sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: percent, total: 100, message: `${event.type} ${stage ?? ''}`.trim() },
          })
          .catch(() => {});
      }
    };
    const follower = generationFollower(hub, kind, id, { event: notify, final: finish, progress: notify });
    follower.subscribe(streamStart);
  });
}
