import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log.ts';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { expectError, startRoutesServer } from '../support/http-helpers.ts';

let db: TestDatabase;
let api: TestApi;

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(db.sql);
});
afterAll(async () => {
  await api.close();
  await db.drop();
});

/** Writes raw bytes to the API and reads what comes back until the server closes the connection. */
function rawExchange(request: string): Promise<{ status: number; headers: Headers; body: any; raw: string }> {
  const { port } = new URL(api.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let raw = '';
    socket.setEncoding('utf8');
    socket.setTimeout(10_000, () => socket.destroy(new Error('the server neither answered nor closed the connection')));
    socket.on('data', (chunk: string) => (raw += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      // The first response on the connection: its head, and its body by Content-Length.
      const head = raw.slice(0, raw.indexOf('\r\n\r\n'));
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = new Headers(
        lines.map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()] as [string, string]),
      );
      const text = Buffer.from(raw.slice(head.length + 4))
        .subarray(0, Number(headers.get('content-length')))
        .toString('utf8');
      const body = (headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text;
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body, raw });
    });
    socket.write(request);
  });
}

describe('requests Node cannot parse get the JSON error envelope', () => {
  it('headers over the server limit are 431 INVALID_INPUT with a body, Connection: close, and the connection closed', async () => {
    const response = await rawExchange(`GET /api/health HTTP/1.1\r\nHost: localhost\r\nX-Padding: ${'x'.repeat(40_000)}\r\n\r\n`);
    expect(response.raw).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    const error = expectError(response, 431, 'INVALID_INPUT');
    expect(error.message).toMatch(/headers are larger than the \d+ bytes the server accepts/);
    expect(response.headers.get('connection')).toBe('close');
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number(response.headers.get('content-length'))).toBe(Buffer.byteLength(JSON.stringify(response.body)));
  });

  it.each([
    ['a request line that is not HTTP', 'THIS IS NOT HTTP\r\n\r\n'],
    ['a header line without a colon', 'GET /api/health HTTP/1.1\r\nHost: localhost\r\nno colon here\r\n\r\n'],
    ['a Content-Length that is not a number', 'POST /api/tiers/pro HTTP/1.1\r\nHost: localhost\r\nContent-Length: lots\r\n\r\n'],
  ])('%s is 400 INVALID_INPUT in the envelope, Connection: close', async (_label, request) => {
    const response = await rawExchange(request);
    expect(response.raw).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(expectError(response, 400, 'INVALID_INPUT').message).toBe('the request is not well-formed HTTP/1.1');
    expect(response.headers.get('connection')).toBe('close');
  });

  it('a request that parses on the same connection is answered first, then the malformed one gets the envelope', async () => {
    const response = await rawExchange('GET /api/health HTTP/1.1\r\nHost: localhost\r\n\r\nNOT HTTP AT ALL\r\n\r\n');
    const answers = response.raw.match(/HTTP\/1\.1 \d{3} /g);
    expect(answers).toEqual(['HTTP/1.1 200 ', 'HTTP/1.1 400 ']);
    expect(response.raw.slice(response.raw.lastIndexOf('HTTP/1.1 400'))).toContain('"code":"INVALID_INPUT"');
  });

  it('the server still answers normally afterwards', async () => {
    expect((await api.call('/api/health')).status).toBe(200);
  });
});

describe('a request that is received too slowly', () => {
  it('the services give a request 30 s from its first byte and its headers 10 s (what REFERENCE.md says)', async () => {
    const { server, close } = await startRoutesServer(db.sql, []);
    try {
      expect([server.requestTimeout, server.headersTimeout]).toEqual([30_000, 10_000]);
    } finally {
      await close();
    }
  });

  it('a body still trickling in when the request timeout passes is cut with 408 INVALID_INPUT, not kept for minutes', async () => {
    const { key } = await createKeyedUser(db.sql, { tier: 'pro', isAdmin: true, scope: 'L4' });
    const logged: string[] = [];
    // The services' limits (above) shortened to a second, so the test waits out the real timeout, not a stand-in.
    const requestTimeout = 1_000;
    const slow = await startTestApi(
      db.sql,
      {},
      createLogger('info', {}, (line) => logged.push(line)),
      {},
      { receiveLimits: { requestTimeout, headersTimeout: requestTimeout, connectionsCheckingInterval: 100 } },
    );
    const { port } = new URL(slow.url);
    const socket = connect(Number(port), '127.0.0.1');
    socket.setEncoding('utf8');
    const started = Date.now();
    socket.write(
      `PATCH /api/tiers/pro HTTP/1.1\r\nHost: localhost\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`,
    );
    // A byte every 100 ms: the connection is never idle, only slow.
    const trickle = setInterval(() => socket.write(' '), 100);
    let raw = '';
    socket.on('data', (chunk: string) => (raw += chunk));
    let giveUp: NodeJS.Timeout | undefined;
    const closedAfterMs = await new Promise<number>((resolve) => {
      socket.on('close', () => resolve(Date.now() - started));
      socket.on('error', () => undefined);
      // Generous: only a connection the server keeps for good gets here.
      giveUp = setTimeout(() => resolve(Infinity), 20 * requestTimeout);
    }).finally(() => {
      clearTimeout(giveUp);
      clearInterval(trickle);
      socket.destroy();
    });
    expect(closedAfterMs, 'the server kept the trickling connection').toBeLessThan(20 * requestTimeout);
    expect(closedAfterMs).toBeGreaterThanOrEqual(requestTimeout);
    expect(raw).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(raw).toContain('{"error":{"code":"INVALID_INPUT","message":"the request was not received in time; send it again"}}');
    // The route reading the body sees it cut off: the caller's failure, not ours (nor the database's) in the log.
    // What it does then runs in the ticks after the cut, before the next request's answer.
    expect((await slow.call('/api/health')).status).toBe(200);
    await slow.close();
    expect(logged.filter((line) => /"level":"(warn|error)"/.test(line))).toEqual([]);
    expect(logged.some((line) => line.includes('"status":408'))).toBe(true);
  });
});
