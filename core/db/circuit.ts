import type { Logger } from '../log.ts';
import { connectionFailureCode, DATABASE_UNAVAILABLE } from './connectionFailure.ts';

/** How often an open circuit tries a fresh connection: the database's return is noticed within this plus one connect. */
const PROBE_INTERVAL_MS = 500;
/** How long a fresh connection's success stands for `verify`, so health checks do not open one connection each. */
const VERIFIED_FOR_MS = 1_000;

/**
 * What a process knows of one database server's reachability. It opens on the first connection
 * failure, so every later connect fails at once instead of waiting for the network; while open, one
 * probe at a time tries a fresh connection every PROBE_INTERVAL_MS, and the first that succeeds closes it.
 */
export interface DatabaseCircuit {
  isOpen(): boolean;
  /** Opens the circuit when `error` says the server is gone or takes no new sessions; other errors change nothing. */
  recordFailure(error: unknown): void;
  /** The error a connect gets while the circuit is open. */
  unavailableError(): Error;
  /** Settles once the next scheduled probe has (at once when the circuit is closed): a pace for retries nobody waits on. */
  nextProbe(): Promise<void>;
  /** Whether the server accepts a fresh connection now (a success under VERIFIED_FOR_MS old counts); false at once while open. */
  verify(): Promise<boolean>;
}

/** `probe` opens a fresh connection and runs a query on it, bypassing the circuit; it rejects when either fails. */
export function createCircuit(probe: () => Promise<void>, log: Logger): DatabaseCircuit {
  let openSince: number | undefined;
  let cause: string | undefined;
  let verifiedAt = 0;
  let probing: Promise<boolean> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let waiters: Array<() => void> = [];

  const wake = () => {
    const waiting = waiters;
    waiters = [];
    waiting.forEach((done) => done());
  };

  const open = (code: string) => {
    if (openSince !== undefined) return;
    openSince = performance.now();
    cause = code;
    log.warn('database unreachable: requests fail fast until a probe connects', { code, probeEveryMs: PROBE_INTERVAL_MS });
    timer = setInterval(() => void runProbe().finally(wake), PROBE_INTERVAL_MS).unref();
  };

  const close = () => {
    verifiedAt = performance.now();
    if (openSince === undefined) return;
    log.info('database reachable again', { outageMs: Math.round(performance.now() - openSince), cause });
    openSince = cause = undefined;
    clearInterval(timer);
    wake();
  };

  const recordFailure = (error: unknown) => {
    const code = connectionFailureCode(error);
    // A failed connect carries the socket's own code (ECONNREFUSED, ENOENT, ETIMEDOUT) as its cause.
    if (code) open(code === DATABASE_UNAVAILABLE ? String((error as { cause?: { code?: unknown } }).cause?.code ?? code) : code);
  };

  const runProbe = (): Promise<boolean> =>
    (probing ??= probe()
      .then(
        () => (close(), true),
        (error: unknown) => (recordFailure(error), false),
      )
      .finally(() => {
        probing = undefined;
      }));

  return {
    isOpen: () => openSince !== undefined,
    recordFailure,
    unavailableError: () =>
      Object.assign(new Error(`the database is unreachable (${cause ?? 'unknown'}); waiting for it to come back`), {
        code: DATABASE_UNAVAILABLE,
      }),
    nextProbe: () => (openSince === undefined ? Promise.resolve() : new Promise<void>((done) => waiters.push(done))),
    async verify() {
      if (openSince !== undefined) return false;
      if (performance.now() - verifiedAt < VERIFIED_FOR_MS) return true;
      return runProbe();
    },
  };
}
