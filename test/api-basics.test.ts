import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeyedUser, startTestApi, type TestApi } from './support/api.ts';
import { createTestDatabase, type TestDatabase } from './support/db.ts';

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

describe('smoke', () => {
  it('serves health without a key and features with one', async () => {
    const health = await api.call('/api/health');
    expect(health.status).toBe(200);
    expect(health.body.data.database.ok).toBe(true);
    const { key } = await createKeyedUser(db.sql);
    const features = await api.call('/api/features', { key });
    expect(features.status).toBe(200);
    expect(features.body.data.tier.name).toBe('pro');
  });
});
