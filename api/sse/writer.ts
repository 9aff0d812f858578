import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '../../core/errors.ts';
import { sseConnections } from '../../core/metrics.ts';
import type { TypedEvent } from '../../core/events/defineEvent.ts';
import { parseEventId, type StoredEvent } from '../../core/events/events.ts';
import { announcesCaptions, captionInfoOf, searchEvents } from '../../core/events/searchEvents.ts';
import type { ChannelObject, VideoObject } from '../../core/videos/videoObject.ts';

/**
 * How far a client may fall behind (bytes written but not yet taken by its socket) before its stream
 * is ended: events are pushed to every client as they commit, so one that cannot keep up would
 * otherwise hold them in memory without bound. It resumes exactly with Last-Event-ID.
 */
const MAX_UNSENT_BYTES = 1024 * 1024;
/** An ended slow stream gets this long to take what is queued for it; then its connection is dropped. */
const SLOW_STREAM_GRACE_MS = 30_000;

/** One Server-Sent Event as it goes on the wire. */
export const eventFrame = (type: string, data: unknown, id?: string) =>
  `${id === undefined ? '' : `id: ${id}\n`}event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * A Server-Sent Events response: frames (see eventFrame) written as given, comments as heartbeats.
 * It sits in `openStreams` while open, so a shutting-down server can end it at once (the client
 * resumes elsewhere).
 */
export function openEventStream(res: ServerResponse, heartbeatSeconds: number, openStreams: Set<{ end(): void }>, onClose: () => void) {
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    // The caller's own events: kept by no cache, and not transformed (compressed, buffered) on the way.
    'Cache-Control': 'private, no-store, no-transform',
    Connection: 'keep-alive',
    // Tells nginx-style proxies not to buffer the stream.
    'X-Accel-Buffering': 'no',
  });
  res.write('retry: 3000\n: connected\n\n');
  let open = true;
  const close = () => {
    if (!open) return;
    open = false;
    openStreams.delete(stream);
    sseConnections.dec();
    clearInterval(heartbeat);
    onClose();
  };
  res.on('close', close);
  const stream = {
    get open() {
      return open;
    },
    /** Whole frames only, so a client cut off anywhere has a last complete event to resume after. */
    write(frames: string | Buffer) {
      if (!open) return;
      if (res.writableLength > MAX_UNSENT_BYTES) {
        stream.end();
        // A client that reads nothing at all would keep what is queued for it forever.
        const drop = setTimeout(() => res.destroy(), SLOW_STREAM_GRACE_MS).unref();
        res.once('finish', () => clearTimeout(drop));
        return;
      }
      res.write(frames);
    },
    /** Resolves once what was written has gone to the socket (or the stream closed): for writers that can wait. */
    drained() {
      return new Promise<void>((resolve) => {
        if (!open || !res.writableNeedDrain) return resolve();
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
    },
    end() {
      if (!open) return;
      close();
      res.end();
    },
  };
  // Comments keep idle connections open through proxies that drop silent ones; one with data queued is not idle.
  const heartbeat = setInterval(() => res.writableLength === 0 && res.write(': keep-alive\n\n'), heartbeatSeconds * 1000);
  openStreams.add(stream);
  sseConnections.inc();
  return stream;
}

/** The id a reconnecting client sends: the Last-Event-ID header, else `?lastEventId=` (for clients that cannot set headers). */
export function lastEventId(req: IncomingMessage, queryValue: string | undefined): string | undefined {
  const header = req.headers['last-event-id'];
  return (typeof header === 'string' && header) || queryValue || undefined;
}

/** A Last-Event-ID that is malformed, out of range, or names no event of the stream: resuming from it would skip or repeat events. */
export const notOfThisStream = (given: string) =>
  new AppError(
    'INVALID_INPUT',
    `Last-Event-ID: "${given}" is not an event id of this stream; reconnect without it to receive the whole stream`,
  );

/** Nothing more to send: 204 stops a standard EventSource from reconnecting (HTML, "server-sent events", §9.2.3). */
export function answerNothingMore(res: ServerResponse): void {
  res.writeHead(204, { 'Cache-Control': 'private, no-store' });
  res.end();
}

// The wire frames of a search stream: its stored part (snapshot) and the crawl's events as the hub delivers them.

/** The id of the frame after the whole stored part: resuming from it skips straight to the crawl's events. */
const SNAPSHOT_DONE = 's:~';

const frame = (event: TypedEvent, id?: string) => eventFrame(event.type, event.payload, id);

/** Every search:video also reaches clients that read only batches: a batch (without id) precedes its videos. */
function videoFrames(videos: Array<{ video: VideoObject; id: string }>): string {
  if (videos.length === 0) return '';
  return (
    frame(searchEvents.videoBatch({ videos: videos.map((entry) => entry.video) })) +
    videos.map((entry) => frame(searchEvents.video(entry.video), entry.id)).join('')
  );
}

export const channelResolvedFrame = (channel: ChannelObject) => frame(searchEvents.channelResolved(channel), 's:');

/** One page of the stored part: its videos (resumable after each, `s:<videoId>`) and their caption news. */
export function snapshotFrames(page: VideoObject[]): string {
  const withCaptions = page.filter(announcesCaptions);
  return (
    videoFrames(page.map((video) => ({ video, id: `s:${video.videoId}` }))) +
    (withCaptions.length ? frame(captionInfoOf(withCaptions)) : '')
  );
}

export const snapshotDoneFrame = (videos: number) =>
  frame(searchEvents.progress({ stage: 'database', percent: 100, videos }), SNAPSHOT_DONE);

const isFinal = (type: string) => type === searchEvents.complete.type || type === searchEvents.error.type;

/**
 * The frames of one delivery of crawl events, up to the final one if it is there. Made once per
 * delivery: the hub hands the same array to every caught-up stream of the crawl, and all of them
 * write this one Buffer.
 */
const deliveryFrames = new WeakMap<readonly StoredEvent[], { frames: Buffer; final: boolean }>();
export function crawlFrames(events: readonly StoredEvent[]): { frames: Buffer; final: boolean } {
  const known = deliveryFrames.get(events);
  if (known) return known;
  let text = '';
  let videos: Array<{ video: VideoObject; id: string }> = [];
  let final = false;
  for (const event of events) {
    const id = `c:${event.id}`;
    if (event.type === searchEvents.video.type) {
      videos.push({ video: event.payload as VideoObject, id });
      continue;
    }
    // Stored events are written as they were stored (checked by their constructors then).
    text += videoFrames(videos) + eventFrame(event.type, event.payload, id);
    videos = [];
    if (isFinal(event.type)) {
      final = true;
      break;
    }
  }
  text += videoFrames(videos);
  const made = { frames: Buffer.from(text), final };
  deliveryFrames.set(events, made);
  return made;
}

/** Resume point: `s:<videoId>` inside the snapshot of stored videos, `c:<event id>` in the crawl's events, `s:~` between the two. */
export type Resume = { phase: 'snapshot'; after: string } | { phase: 'snapshotDone' } | { phase: 'live'; eventId: string };

/** A resume point as the stream wrote it; undefined when malformed. */
export function parseResume(value: string): Resume | undefined {
  if (value === SNAPSHOT_DONE) return { phase: 'snapshotDone' };
  if (value.startsWith('s:')) return /^s:[A-Za-z0-9_-]{0,11}$/.test(value) ? { phase: 'snapshot', after: value.slice(2) } : undefined;
  const eventId = value.startsWith('c:') ? parseEventId(value.slice(2)) : undefined;
  return eventId ? { phase: 'live', eventId } : undefined;
}
