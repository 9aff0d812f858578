import { circuitOf, type Sql } from './database.ts';

/** The least time between two tries, should an error leave the circuit closed (it probes every 500 ms). */
const MIN_PAUSE_MS = 500;

/**
 * Settles once `sql` runs a query again, trying at the pace of the pool's circuit (core/db/circuit.ts):
 * while the database is gone, every try fails at once and the next waits for the circuit's next probe.
 */
export async function waitForDatabase(sql: Sql): Promise<void> {
  const circuit = circuitOf(sql);
  for (;;) {
    try {
      await sql`select 1`;
      return;
    } catch {
      await Promise.all([circuit?.nextProbe(), new Promise((done) => setTimeout(done, MIN_PAUSE_MS))]);
    }
  }
}
