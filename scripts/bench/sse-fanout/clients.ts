/**
 * The stream clients of sse-fanout, in a process of their own (forked with an IPC channel) so that they
 * never share an event loop with the API under test: raw node:http and lib/sse-parse.ts, no JSON.parse.
 * 'connect' opens every stream and answers once each has passed its snapshot (`s:~`, after which the API
 * follows the crawl live); 'finish' (sent after search:complete) waits for every stream to end and reports.
 */
import { request } from 'node:http';
import { createSseParser } from '../lib/sse-parse.ts';
import { percentile, round } from '../lib/stats.ts';

export type ParentMessage =
  | { type: 'connect'; host: string; port: number; streams: Array<{ path: string; key: string }>; expected: number; timeoutMs: number }
  | { type: 'finish'; timeoutMs: number };
export type ClientMessage = Awaited<ReturnType<typeof connect | typeof finish>> | { type: 'failed'; message: string };
export type FanoutReport = Awaited<ReturnType<typeof finish>>['report'];

interface Client {
  lastEventId?: string;
  connectedAt: number;
  completed: boolean;
  ended: boolean;
}

const clients: Client[] = [];
const errors: string[] = [];
let latencies = new Float64Array(0);
let delivered = 0;
let resumed = 0;
let changed = () => {};
const wall = () => performance.timeOrigin + performance.now();

function open(host: string, port: number, stream: { path: string; key: string }, timeoutMs: number): Client {
  const client: Client = { connectedAt: Number.NaN, completed: false, ended: false };
  const end = (error?: string) => {
    if (error && errors.length < 20) errors.push(error);
    client.ended = true;
    changed();
  };
  const get = () => {
    const headers: Record<string, string> = { Accept: 'text/event-stream', 'X-API-Key': stream.key };
    if (client.lastEventId) headers['Last-Event-ID'] = client.lastEventId;
    const req = request({ host, port, path: stream.path, agent: false, headers }, (response) => {
      response.setEncoding('utf8');
      if (response.statusCode !== 200) {
        let body = '';
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => end(`status ${response.statusCode}: ${body.slice(0, 200)}`));
        return;
      }
      const parse = createSseParser((frame) => {
        if (frame.id !== undefined) client.lastEventId = frame.id;
        if (frame.id === 's:~') {
          client.connectedAt = performance.now();
          changed();
        } else if (frame.event === 'search:complete') client.completed = true;
        else if (frame.id?.startsWith('c:')) {
          const arrival = wall();
          if (delivered < latencies.length) latencies[delivered] = arrival - Number(/"sentAt":([\d.]+)/.exec(frame.data)?.[1]);
          delivered += 1;
        }
      });
      response.on('data', parse);
      response.on('end', () => {
        if (client.completed || Number.isNaN(client.connectedAt)) return end();
        resumed += 1;
        get();
      });
      response.on('error', (error) => end(`stream error: ${error.message}`));
    });
    // The inactivity limit of the whole run: heartbeats keep idle streams going.
    req.setTimeout(timeoutMs, () => req.destroy(new Error('no data within the timeout')));
    req.on('error', (error) => end(`request error: ${error.message}`));
    req.end();
  };
  get();
  return client;
}

/** Resolves when `done()` holds, checked whenever a client changes, or after `timeoutMs`. */
function until(done: () => boolean, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    changed = () => {
      if (!done()) return;
      clearTimeout(timer);
      resolve();
    };
    changed();
  });
}

async function connect(message: Extract<ParentMessage, { type: 'connect' }>) {
  // Room for every arrival up front: growing it mid-run would pause the clients and show as latency.
  latencies = new Float64Array(message.expected);
  const started = performance.now();
  for (const stream of message.streams) clients.push(open(message.host, message.port, stream, message.timeoutMs));
  await until(() => clients.every((client) => client.ended || !Number.isNaN(client.connectedAt)), message.timeoutMs);
  const connected = clients.filter((client) => !Number.isNaN(client.connectedAt));
  const rampMs = Math.max(...connected.map((client) => client.connectedAt)) - started;
  return { type: 'connected' as const, connected: connected.length, rampMs, errors };
}

async function finish(message: Extract<ParentMessage, { type: 'finish' }>) {
  await until(() => clients.every((client) => client.ended), message.timeoutMs);
  const sorted = latencies.subarray(0, Math.min(delivered, latencies.length)).sort();
  const at = (p: number) => round(percentile(sorted, p), 1);
  const usage = process.cpuUsage();
  return {
    type: 'report' as const,
    report: {
      delivered,
      /** Each arrival − the `sentAt` the event carries, ms. */
      latencyMs: { p50: at(50), p95: at(95), p99: at(99), max: at(100) },
      /** Streams the API ended because their client fell behind, each resumed with Last-Event-ID. */
      resumed,
      completed: clients.filter((client) => client.completed).length,
      stillOpen: clients.filter((client) => !client.ended).length,
      errors,
      cpuSeconds: round((usage.user + usage.system) / 1e6, 2),
    },
  };
}

process.on('message', (message: ParentMessage) => {
  (message.type === 'connect' ? connect(message) : finish(message)).then(
    (reply) => process.send!(reply),
    (error: Error) => process.send!({ type: 'failed', message: error.stack ?? String(error) }),
  );
});
// The parent went away: nothing left to report to.
process.once('disconnect', () => process.exit(0));
