/**
 * A local HTTP server that records every request it receives and answers with a handler: a
 * stand-in upstream scripted by a test (a page naming another host, a redirect), or a "foreign"
 * host that must never be contacted (its default answer is a 200, so a request that reaches it
 * would succeed and show).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface RecordingServer {
  /** http://127.0.0.1:<port> */
  url: string;
  /** Paths with their query, in arrival order. */
  requests: string[];
  close(): Promise<void>;
}

type Handler = (url: URL, res: ServerResponse, req: IncomingMessage) => void;

const answerFound: Handler = (_url, res) => void res.writeHead(200, { 'Content-Type': 'text/plain' }).end('foreign content');

export async function startRecordingServer(handler: Handler = answerFound): Promise<RecordingServer> {
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://local');
    requests.push(`${url.pathname}${url.search}`);
    handler(url, res, req);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
