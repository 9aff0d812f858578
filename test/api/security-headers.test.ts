import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSession } from '../../core/accounts/createSession.ts';
import { assetUrl } from '../../api/web/assets.ts';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { addTrack, addVideos, channelIdFor, videoIdFor, vttOf } from '../support/subtitles.ts';

// X-Content-Type-Options on every kind of answer, set in one place (api/http/securityHeaders.ts), and
// Strict-Transport-Security on every answer when PUBLIC_URL is https, and only then.

let db: TestDatabase;
let https: TestApi;
let plain: TestApi;
let key: string;
let sessionCookie: string;
const VIDEO = videoIdFor('headers');
const HSTS = 'max-age=31536000';

beforeAll(async () => {
  db = await createTestDatabase();
  [https, plain] = await Promise.all([
    startTestApi(db.sql, { PUBLIC_URL: 'https://archive.example.org' }),
    startTestApi(db.sql, { PUBLIC_URL: 'http://archive.example.org', TRUST_PROXY: 'true' }),
  ]);
  const user = await createKeyedUser(db.sql, { tier: 'pro' });
  key = user.key;
  sessionCookie = `__Host-afterimage_session=${(await createSession(db.sql, user.user.id)).token}`;
  await addVideos(db.sql, channelIdFor('headers'), [{ videoId: VIDEO }]);
  await addTrack(db.sql, { videoId: VIDEO, language: 'en', kind: 'manual', text: vttOf(['<html><script>alert(1)</script>']) });
}, 60_000);

afterAll(async () => {
  await Promise.all([https?.close(), plain?.close()]);
  await db?.drop();
});

/** Writes a request Node's parser refuses and reads the raw answer's head. */
function unparsable(api: TestApi): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(api.url).port), '127.0.0.1');
    let raw = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (raw += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(raw.slice(0, raw.indexOf('\r\n\r\n'))));
    socket.write('NOT HTTP AT ALL\r\n\r\n');
  });
}

const html = { Accept: 'text/html' };
const answers: Array<[what: string, path: string, init: RequestInit, status: number]> = [
  ['an API answer', '/api/health', {}, 200],
  ['an API error', '/api/nothing-here', {}, 404],
  ['a subtitle download', `/api/subtitles/${VIDEO}?format=vtt`, {}, 200],
  ["a subtitle download from the video's page", `/videos/${VIDEO}/subtitles.srt`, { headers: html }, 200],
  ['a page', '/', { headers: html }, 200],
  ['an error page', '/no-such-page', { headers: html }, 404],
  ['an invalid page request', '/summaries?tag=%00', { headers: html }, 400],
  ['an asset', assetUrl('site.css'), {}, 200],
  ['the API reference page', '/api/docs', {}, 200],
  [
    'a CORS preflight',
    '/api/health',
    { method: 'OPTIONS', headers: { Origin: 'https://other.example', 'Access-Control-Request-Method': 'GET' } },
    204,
  ],
  ['an MCP refusal', '/mcp', { method: 'GET' }, 405],
];

describe('headers on every answer', () => {
  it.each(answers)('%s carries nosniff, and HSTS under an https PUBLIC_URL', async (_what, path, init, status) => {
    const headers = new Headers(init.headers);
    headers.set('X-API-Key', key);
    headers.set('Cookie', sessionCookie);
    const response = await fetch(`${https.url}${path}`, { ...init, headers, redirect: 'manual' });
    await response.arrayBuffer();
    expect(response.status).toBe(status);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('strict-transport-security')).toBe(HSTS);
  });

  it("an answer to a request Node's parser refuses carries them too", async () => {
    const head = await unparsable(https);
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(head).toContain('\r\nX-Content-Type-Options: nosniff');
    expect(head).toContain(`\r\nStrict-Transport-Security: ${HSTS}`);
  });

  it('no HSTS under an http PUBLIC_URL, not even when a trusted proxy says the request came over https', async () => {
    const response = await fetch(`${plain.url}/`, { headers: { ...html, 'X-Forwarded-Proto': 'https' } });
    await response.arrayBuffer();
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.has('strict-transport-security')).toBe(false);
    expect(await unparsable(plain)).not.toContain('Strict-Transport-Security');
  });
});
