import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, driverPool, type TestDatabase } from '../support/db.ts';

// postgres.js 3.4.9 could send a transaction's BEGIN without reserving its connection when the
// connection's pipeline was full or its socket pushed back (porsager/postgres#823, #1189): the
// transaction then failed with UNSAFE_TRANSACTION, or other queries ran inside it. scripts/patches/ (applied
// by patch-package at npm install) fixes the driver; this reproduction of #823 failed every round before.
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db?.drop());

// max_pipeline is an option postgres.js reads but its types leave out.
const pool = (url: string) => driverPool(url, { max: 3, max_pipeline: 2 });

describe('transactions on busy, pipelined connections', () => {
  it('reserves the connection for every BEGIN: no UNSAFE_TRANSACTION, every transaction answers', async () => {
    const sql = pool(db.url);
    const failures: string[] = [];
    try {
      for (let round = 0; round < 5; round++) {
        const busy = Array.from({ length: 3 }, () => sql`select pg_sleep(0.05)`.execute());
        // One more query on each busy connection, so the next BEGIN fills a pipeline (max_pipeline 2).
        const plain = Array.from({ length: 3 }, () => sql`select 1`.execute());
        const transactions = Array.from({ length: 5 }, (_, i) =>
          sql.begin(async (tx) => {
            const [row] = await tx<{ n: number }[]>`select ${i}::int as n`;
            return row!.n;
          }),
        );
        const settled = await Promise.allSettled([...busy, ...plain, ...transactions]);
        for (const outcome of settled)
          if (outcome.status === 'rejected') failures.push(String((outcome.reason as { code?: string }).code ?? outcome.reason));
        if (!failures.length)
          expect(settled.slice(6).map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : 'failed'))).toEqual([0, 1, 2, 3, 4]);
      }
    } finally {
      await sql.end({ timeout: 1 });
    }
    expect(failures).toEqual([]);
  });
});
