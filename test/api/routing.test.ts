import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineRoute } from '../../api/http/route.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { startRoutesServer } from '../support/http-helpers.ts';

let db: TestDatabase;
let url: string;
let close: () => Promise<void>;

const echo = defineRoute({
  method: 'GET',
  path: '/echo/:name',
  tag: 'System',
  summary: 'echoes its path parameter',
  auth: 'public',
  rateLimited: false,
  params: z.object({ name: z.string() }),
  response: z.object({ name: z.string() }),
  async handler({ params }) {
    return { name: params.name };
  },
});

beforeAll(async () => {
  db = await createTestDatabase();
  ({ url, close } = await startRoutesServer(db.sql, [echo]));
});
afterAll(async () => {
  await close();
  await db.drop();
});

describe('route lookups, remembered per method and path', () => {
  it('decode a percent-encoded parameter once on every request, not again on a remembered one', async () => {
    // %2541 is "%41" once decoded; decoded twice it would be "A".
    for (let round = 0; round < 3; round++) {
      const response = await fetch(`${url}/echo/a%2541`);
      expect(await response.json()).toEqual({ data: { name: 'a%41' } });
    }
  });

  it('give each path its own parameters and keep 404 and 405 apart', async () => {
    expect(await (await fetch(`${url}/echo/one`)).json()).toEqual({ data: { name: 'one' } });
    expect(await (await fetch(`${url}/echo/two`)).json()).toEqual({ data: { name: 'two' } });
    expect(await (await fetch(`${url}/echo/one`)).json()).toEqual({ data: { name: 'one' } });
    expect((await fetch(`${url}/echo/one`, { method: 'DELETE' })).status).toBe(405);
    expect((await fetch(`${url}/nowhere`)).status).toBe(404);
  });
});
