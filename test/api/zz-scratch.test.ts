import { afterAll, beforeAll, it } from 'vitest';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
let db: TestDatabase; let api: TestApi;
beforeAll(async () => { db = await createTestDatabase(); api = await startTestApi(db.sql, { BODY_LIMIT_BYTES: '2048' }); });
afterAll(async () => { await api.close(); await db.drop(); });
it('explore', async () => {
  const { key } = await createKeyedUser(db.sql, { isAdmin: true, scope: 'L4' });
  const show = (label: string, r: any) => console.log(label, r.status, JSON.stringify(r.body).slice(0, 300), r.headers.get('allow'));
  show('get bad pct', await api.call('/api/tiers/%E0%A4%A'));
  show('patch bad pct', await api.call('/api/tiers/%E0%A4%A', { method: 'PATCH', key }));
  show('unknown bad pct', await api.call('/api/%E0%A4%A'));
  show('features bad q', await api.call('/api/features?x=%E0%A4%A'));
  show('patch foo', await api.call('/api/tiers/pro', { method: 'PATCH', key, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ foo: 1 }) }));
  show('patch x', await api.call('/api/tiers/pro', { method: 'PATCH', key, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ limits: { requestsPerMinute: 'x' } }) }));
  show('patch neg', await api.call('/api/tiers/pro', { method: 'PATCH', key, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ limits: { requestsPerMinute: -1 } }) }));
  show('patch bogus', await api.call('/api/tiers/bogus', { method: 'PATCH', key, headers: { 'content-type': 'application/json' }, body: '{}' }));
  show('patch big', await api.call('/api/tiers/pro', { method: 'PATCH', key, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ x: 'a'.repeat(3000) }) }));
  try {
    const stream = new ReadableStream({ start(c) { for (let i = 0; i < 10; i++) c.enqueue(new TextEncoder().encode('a'.repeat(1000))); c.close(); } });
    show('patch chunked big', await api.call('/api/tiers/pro', { method: 'PATCH', key, headers: { 'content-type': 'application/json' }, body: stream, duplex: 'half' } as any));
  } catch (e) { console.log('chunked error', e); }
  show('after', await api.call('/api/health'));
});
