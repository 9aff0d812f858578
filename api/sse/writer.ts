import type { ServerResponse } from 'node:http';
import { sseConnections } from '../../core/metrics.ts';

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
