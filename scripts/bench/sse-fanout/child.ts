/**
 * The stream clients of sse-fanout.ts, in their own process (started by it with an IPC channel), so
 * that they never share an event loop with the API under test. Kept light: raw node:http, the minimal
 * parser of sse-parse.ts, and the benchmark's fields read from the data text without JSON.parse.
 *
 * Protocol: the parent sends 'connect' (every client's path and key); all requests go out at once and
 * 'connected' answers when each stream has passed its snapshot (the `s:~` event, after which the API
 * subscribes it to the crawl's live events) or failed. Live events carry `seq` (the commit), `idx`
 * (the event within it) and `sentAt` (wall clock, ms, stamped just before the commit) in their data;
 * each arrival is recorded. 'finish' brings every commit's acknowledgement time and the expected event
 * count; the clients then wait for their streams to end (search:complete) and send a 'report'.
 * A stream the API ends before search:complete (a client too far behind) is resumed with
 * Last-Event-ID, as EventSource does, and counted.
 */
import { request, type ClientRequest } from 'node:http';
import { createSseParser } from '../lib/sse-parse.ts';
import { percentile } from '../lib/stats.ts';
import type { FanoutClientSpec, ParentMessage, LatencySummary, FanoutReport, ClientMessage } from './protocol.ts';

const wall = () => performance.timeOrigin + performance.now();
const send = (message: ClientMessage) => new Promise<void>((done) => process.send!(message, () => done()));

function summarise(values: Float64Array): LatencySummary {
  const sorted = values.slice().sort();
  const n = sorted.length;
  const at = (p: number) => percentile(sorted, p);
  let sum = 0;
  for (const value of sorted) sum += value;
  return {
    count: n,
    mean: n ? sum / n : Number.NaN,
    p50: at(50),
    p90: at(90),
    p95: at(95),
    p99: at(99),
    p999: at(99.9),
    max: n ? sorted[n - 1]! : Number.NaN,
    min: n ? sorted[0]! : Number.NaN,
  };
}

/** A number after `"name":` in a JSON text, without parsing the rest. */
function numberField(data: string, name: string): number {
  const at = data.indexOf(`"${name}":`);
  if (at === -1) return Number.NaN;
  const start = at + name.length + 3;
  let end = start;
  while (end < data.length) {
    const code = data.charCodeAt(end);
    if (!((code >= 48 && code <= 57) || code === 46 || code === 45 || code === 101 || code === 43)) break;
    end++;
  }
  return Number(data.slice(start, end));
}

interface Client {
  request?: ClientRequest;
  /** The id of the last event received: where a resumed stream starts. */
  lastEventId?: string;
  status: number;
  connectedAt: number;
  lastKey: number;
  received: number;
  completed: boolean;
  ended: boolean;
}

const clients: Client[] = [];
let arrivals = new Float64Array(1 << 20);
let sentAts = new Float64Array(1 << 20);
let seqs = new Int32Array(1 << 20);
let count = 0;
let duplicatesOrReordered = 0;
let batches = 0;
let heartbeats = 0;
let resumed = 0;
let maxRssMiB = 0;
const errors: string[] = [];
let connectStarted = 0;
let onProgress: () => void = () => {};

function record(arrival: number, sentAt: number, seq: number) {
  if (count === arrivals.length) {
    const grow = <T extends Float64Array | Int32Array>(array: T, make: (n: number) => T) => {
      const bigger = make(array.length * 2);
      bigger.set(array);
      return bigger;
    };
    arrivals = grow(arrivals, (n) => new Float64Array(n));
    sentAts = grow(sentAts, (n) => new Float64Array(n));
    seqs = grow(seqs, (n) => new Int32Array(n));
  }
  arrivals[count] = arrival;
  sentAts[count] = sentAt;
  seqs[count] = seq;
  count++;
}

function open(host: string, port: number, spec: FanoutClientSpec, timeoutMs: number): Client {
  const client: Client = { status: 0, connectedAt: Number.NaN, lastKey: -1, received: 0, completed: false, ended: false };
  const finish = () => {
    if (client.ended) return;
    client.ended = true;
    onProgress();
  };
  const get = () => {
    const headers: Record<string, string> = { Accept: 'text/event-stream', 'X-API-Key': spec.key };
    if (client.lastEventId !== undefined) headers['Last-Event-ID'] = client.lastEventId;
    const req = request({ host, port, path: spec.path, method: 'GET', agent: false, headers }, (response) => {
      client.status = response.statusCode ?? 0;
      if (client.status !== 200) {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => {
          errors.push(`status ${client.status}: ${body.slice(0, 200)}`);
          finish();
        });
        return;
      }
      response.setEncoding('utf8');
      const feed = createSseParser(
        (frame) => {
          const id = frame.id;
          if (id !== undefined) client.lastEventId = id;
          if (id !== undefined && id.charCodeAt(0) === 99 /* c */) {
            const arrival = wall();
            if (frame.event === 'search:complete') {
              client.completed = true;
              return;
            }
            const seq = numberField(frame.data, 'seq');
            const idx = numberField(frame.data, 'idx');
            const key = seq * 1024 + idx;
            if (!(key > client.lastKey)) duplicatesOrReordered++;
            else client.lastKey = key;
            client.received++;
            record(arrival, numberField(frame.data, 'sentAt'), seq);
          } else if (id === 's:~') {
            client.connectedAt = performance.now();
            onProgress();
          } else if (frame.event === 'search:video_batch') batches++;
        },
        (comment) => {
          if (comment.startsWith('keep-alive')) heartbeats++;
        },
      );
      response.on('data', feed);
      // Ended early by the API (this client fell too far behind): resume where it left off.
      const endedEarly = () => !client.completed && !Number.isNaN(client.connectedAt);
      response.on('end', () => {
        if (!endedEarly()) return finish();
        resumed++;
        get();
      });
      response.on('error', (error) => {
        errors.push(`stream error: ${error.message}`);
        finish();
      });
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error('no data within the timeout')));
    req.on('error', (error) => {
      errors.push(`request error: ${error.message}`);
      finish();
    });
    req.end();
    client.request = req;
  };
  get();
  return client;
}

async function connect(message: Extract<ParentMessage, { type: 'connect' }>) {
  // Room for every arrival up front: growing the arrays mid-run would pause the clients and show as latency.
  if (message.expectedDeliveries > arrivals.length) {
    arrivals = new Float64Array(message.expectedDeliveries);
    sentAts = new Float64Array(message.expectedDeliveries);
    seqs = new Int32Array(message.expectedDeliveries);
  }
  connectStarted = performance.now();
  const ready = new Promise<void>((resolve) => {
    onProgress = () => {
      if (clients.every((client) => client.ended || !Number.isNaN(client.connectedAt))) resolve();
    };
  });
  // The per-request timeout is the inactivity limit of the whole run: heartbeats keep idle streams going.
  for (const spec of message.clients) clients.push(open(message.host, message.port, spec, message.timeoutMs));
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([ready, new Promise((resolve) => (timer = setTimeout(resolve, message.timeoutMs)))]);
  clearTimeout(timer);
  const connectedClients = clients.filter((client) => !Number.isNaN(client.connectedAt));
  const rampMs = connectedClients.length ? Math.max(...connectedClients.map((client) => client.connectedAt)) - connectStarted : Number.NaN;
  onProgress = () => {};
  await send({ type: 'connected', connected: connectedClients.length, failures: errors.slice(0, 20), rampMs });
}

async function finish(message: Extract<ParentMessage, { type: 'finish' }>) {
  await new Promise<void>((resolve) => {
    const check = () => {
      if (clients.every((client) => client.ended)) resolve();
    };
    onProgress = check;
    check();
    setTimeout(resolve, message.timeoutMs).unref();
  });
  const acks = message.acks;
  const fromSentAt = new Float64Array(count);
  const fromCommit = new Float64Array(count);
  const lastPerCommit = new Float64Array(acks.length).fill(Number.NEGATIVE_INFINITY);
  for (let i = 0; i < count; i++) {
    fromSentAt[i] = arrivals[i]! - sentAts[i]!;
    const seq = seqs[i]!;
    const ack = acks[seq] ?? Number.NaN;
    fromCommit[i] = arrivals[i]! - ack;
    if (arrivals[i]! > lastPerCommit[seq]!) lastPerCommit[seq] = arrivals[i]!;
  }
  const lastClient = new Float64Array(acks.length);
  for (let seq = 0; seq < acks.length; seq++) lastClient[seq] = lastPerCommit[seq]! - acks[seq]!;
  const connected = clients.filter((client) => !Number.isNaN(client.connectedAt));
  const connectTimes = new Float64Array(connected.map((client) => client.connectedAt - connectStarted));
  const short = connected.filter((client) => client.received !== message.expectedEvents);
  const usage = process.cpuUsage();
  const report: FanoutReport = {
    clients: clients.length,
    connected: connected.length,
    connectFailures: errors.slice(0, 20),
    rampMs: connectTimes.length ? Math.max(...connectTimes) : Number.NaN,
    connectMs: summarise(connectTimes),
    delivered: count,
    expectedPerClient: message.expectedEvents,
    clientsShort: short.length,
    missing: short.reduce((sum, client) => sum + Math.max(0, message.expectedEvents - client.received), 0),
    duplicatesOrReordered,
    batches,
    heartbeats,
    resumed,
    fromSentAt: summarise(fromSentAt),
    fromCommit: summarise(fromCommit),
    lastClientPerCommit: summarise(lastClient.filter((value) => Number.isFinite(value))),
    lastClientByCommit: Array.from(lastClient, (value) => (Number.isFinite(value) ? Math.round(value * 10) / 10 : null)),
    completed: clients.filter((client) => client.completed).length,
    ended: clients.filter((client) => client.ended).length,
    stillOpen: clients.filter((client) => !client.ended).length,
    errors: errors.slice(0, 20),
    cpuUs: usage.user + usage.system,
    maxRssMiB: Math.round(Math.max(maxRssMiB, process.memoryUsage().rss / 2 ** 20)),
  };
  for (const client of clients) client.request?.destroy();
  await send({ type: 'report', report });
}

const rssTimer = setInterval(() => (maxRssMiB = Math.max(maxRssMiB, process.memoryUsage().rss / 2 ** 20)), 500);
rssTimer.unref();

process.on('message', (message: ParentMessage) => {
  const work = message.type === 'connect' ? connect(message) : finish(message);
  work.catch((error: unknown) =>
    send({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
  );
});
// The parent went away: nothing left to report to.
process.once('disconnect', () => setTimeout(() => process.exit(0), 100).unref());
