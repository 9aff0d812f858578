import postgres from 'postgres';
import type { Sql } from '../../../core/db/database.ts';

/**
 * A one-connection pool that records the statements (text and parameters) it sends until `stop()`:
 * what EXPLAIN replays to show the plans of a call as it really ran.
 */
export function recordingPool(url: string): { sql: Sql; statements: Array<{ text: string; params: unknown[] }>; stop(): void } {
  const statements: Array<{ text: string; params: unknown[] }> = [];
  let recording = true;
  const parsed = new URL(url);
  const socketDir = parsed.searchParams.get('host');
  parsed.searchParams.delete('host');
  const sql = postgres(parsed.toString(), {
    ...(socketDir ? { host: socketDir } : {}),
    max: 1,
    onnotice: () => undefined,
    // A copy: postgres.js later serialises the array in place.
    debug: (_connection, text, params) => recording && statements.push({ text, params: [...(params as unknown[])] }),
  });
  return { sql, statements, stop: () => void (recording = false) };
}
