import type { ServerResponse } from 'node:http';

/**
 * A Server-Sent Events response: typed events with optional ids, comments as heartbeats. It sits in
 * `openStreams` while open, so a shutting-down server can end it at once (the client resumes elsewhere).
 */
export function openEventStream(res: ServerResponse, heartbeatSeconds: number, openStreams: Set<{ end(): void }>, onClose: () => void) {
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    // Tells nginx-style proxies not to buffer the stream.
    'X-Accel-Buffering': 'no',
  });
  res.write('retry: 3000\n: connected\n\n');
  // Comments keep idle connections open through proxies that drop silent ones.
  const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), heartbeatSeconds * 1000);
  let open = true;
  const close = () => {
    if (!open) return;
    open = false;
    openStreams.delete(stream);
    clearInterval(heartbeat);
    onClose();
  };
  res.on('close', close);
  const stream = {
    get open() {
      return open;
    },
    send(type: string, data: unknown, id?: string) {
      if (!open) return;
      res.write(`${id === undefined ? '' : `id: ${id}\n`}event: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    end() {
      if (!open) return;
      close();
      res.end();
    },
  };
  openStreams.add(stream);
  return stream;
}
export type EventStream = ReturnType<typeof openEventStream>;
