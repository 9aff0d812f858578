/** What a 503 for an unreachable database tells clients to wait: the circuit probes every half second, so a second or two sees it back. */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

/** The code of the error a query gets while the database circuit is open (core/db/circuit.ts). */
export const DATABASE_UNAVAILABLE = 'DATABASE_UNAVAILABLE';

/**
 * Errors that say the server is gone or takes no new sessions, not that a query was wrong: a failed
 * connect (core/db/database.ts gives it DATABASE_UNAVAILABLE, so a missing file's ENOENT is never
 * taken for one), a socket lost mid-session, postgres.js's connection errors, admin or crash shutdown,
 * "cannot connect now" (starting up, shutting down, recovering) and SQLSTATE class 08.
 */
const connectionFailureCodes = new Set([
  DATABASE_UNAVAILABLE,
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  '57P01',
  '57P02',
  '57P03',
]);

export function connectionFailureCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code !== 'string') return undefined;
  return connectionFailureCodes.has(code) || code.startsWith('08') ? code : undefined;
}
