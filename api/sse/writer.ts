import type { ServerResponse } from 'node:http';

/** A Server-Sent Events response: typed events with optional ids, comments as heartbeats. */
export function openEventStream(res: ServerResponse, heartbeatSeconds: number, onClose: () => void) {
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
    clearInterval(heartbeat);
    onClose();
  };
  res.on('close', close);
  return {
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
}
export type EventStream = ReturnType<typeof openEventStream>;
