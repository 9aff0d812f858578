import { connect as connectSocket, type Socket } from 'node:net';
import { Duplex } from 'node:stream';
import postgres from 'postgres';
import { createLogger, type Logger } from '../log.ts';
import { version } from '../version.ts';
import { createCircuit, type DatabaseCircuit } from './circuit.ts';
import { DATABASE_UNAVAILABLE } from './connectionFailure.ts';

export type Sql = postgres.Sql;
/** A pool or a transaction: what plain query functions take, so callers choose the transaction. */
export type Queryable = postgres.ISql;

/** A database URL with another database name, keeping its socket or host settings. */
export function withDatabaseName(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

/**
 * Every connection names its process, role and version (`afterimage:<pid>:<role>:<version>`), so the
 * embedded cluster knows when its last user has gone and `afterimage status` which services run.
 */
const applicationName = (role: string) => `afterimage:${process.pid}:${role}:${version}`;

/** A connect (socket, then startup and authentication) that takes longer fails: a vanished host must not hold requests. */
const CONNECT_TIMEOUT_MS = 2_000;

/** Every pool of this process to one database shares one circuit, whichever opened it. */
const circuits = new Map<string, DatabaseCircuit>();
const circuitsBySql = new WeakMap<Sql, DatabaseCircuit>();

/** The circuit of a pool made by `connect`: what health asks before it queries. */
export const circuitOf = (sql: Sql): DatabaseCircuit | undefined => circuitsBySql.get(sql);

/** What runs when the LISTEN connection of a pool made by `connect` closes (see core/db/watchChannel.ts). */
const listenClosedHooks = new WeakMap<Sql, Set<() => void>>();

/**
 * Runs `hook` each time the pool's LISTEN connection closes: notifications sent until postgres.js has
 * listened again (at once, or after the circuit's next probe) are lost. Returns the function that removes it.
 */
export function onListenConnectionClosed(sql: Sql, hook: () => void): () => void {
  const hooks = listenClosedHooks.get(sql);
  if (!hooks) throw new Error('onListenConnectionClosed: the pool was not made by connect(), which watches its LISTEN connection');
  hooks.add(hook);
  return () => hooks.delete(hook);
}

/** What postgres.js hands its `socket` option: the parsed connection options. */
interface SocketTarget {
  path?: string | false;
  host: string[];
  port: number[];
  ssl?: unknown;
  onnotify?: unknown;
}

function openSocket(target: SocketTarget, index: number): Promise<Socket> {
  const host = target.host[index]!;
  const socket = target.path ? connectSocket(target.path) : connectSocket(target.port[index] ?? target.port[0]!, host);
  // postgres.js names the TLS server after the socket's host (SNI and verify-full).
  Object.assign(socket, { host });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => socket.destroy(Object.assign(new Error(`no connection within ${CONNECT_TIMEOUT_MS} ms`), { code: 'ETIMEDOUT' })),
      CONNECT_TIMEOUT_MS,
    );
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeListener('error', reject);
      resolve(socket);
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

/**
 * A stand-in socket that fails with `error` once postgres.js has written to it. A factory that throws
 * would leave the pool's slot stuck connecting; a socket that fails before postgres.js has flushed its
 * startup message would leave that message behind for the slot's next connection, which then times out.
 */
function failedSocket(error: Error): Socket {
  const socket: Duplex = new Duplex({
    read() {},
    write(_chunk, _encoding, done) {
      done();
      process.nextTick(() => socket.destroy(error));
    },
  });
  return socket as unknown as Socket;
}

/** The SQLSTATE of an ErrorResponse that opens a plaintext session (57P03 while the server starts or shuts down). */
function startupErrorCode(chunk: Buffer): string | undefined {
  if (chunk[0] !== 0x45) return undefined; // 'E'
  for (let at = 5; at < chunk.length && chunk[at] !== 0; ) {
    const end = chunk.indexOf(0, at + 1);
    if (end < 0) return undefined;
    if (chunk[at] === 0x43) return chunk.toString('utf8', at + 1, end); // 'C'
    at = end + 1;
  }
  return undefined;
}

/**
 * postgres.js's `socket` option, so every connect of the pool (queries, transactions, LISTEN) passes
 * the circuit: fail at once while it is open, else connect within CONNECT_TIMEOUT_MS and report what
 * says the server is gone. The LISTEN connection, which postgres.js re-opens at once after every
 * failure and nobody waits on, waits for the circuit's next probe instead of spinning.
 */
function circuitSocket(circuit: DatabaseCircuit) {
  return async (target: SocketTarget): Promise<Socket> => {
    if (circuit.isOpen() && target.onnotify) await circuit.nextProbe();
    if (circuit.isOpen()) return failedSocket(circuit.unavailableError());
    let socket: Socket | undefined;
    let lastError: Error | undefined;
    for (let index = 0; !socket && index < (target.path ? 1 : target.host.length); index++) {
      socket = await openSocket(target, index).catch((error: Error) => ((lastError = error), undefined));
    }
    if (!socket) {
      // Its own code: ENOENT or ECONNREFUSED alone could be any file's or service's.
      const failure = Object.assign(new Error(`cannot connect to the database: ${lastError?.message ?? 'no host'}`), {
        code: DATABASE_UNAVAILABLE,
        cause: lastError,
      });
      circuit.recordFailure(failure);
      return failedSocket(failure);
    }
    let answered = false;
    socket.once('data', (chunk: Buffer) => {
      answered = true;
      if (!target.ssl) circuit.recordFailure({ code: startupErrorCode(chunk) });
    });
    // A server (or a proxy before it) that accepts and hangs up without a word is gone too.
    socket.once('close', () => answered || circuit.recordFailure({ code: 'CONNECTION_CLOSED' }));
    return socket;
  };
}

/** postgres.js reads a `socket` factory (it opens the connection; postgres.js speaks the protocol over it) that its types leave out. */
const socketOption = (factory: (target: SocketTarget) => Promise<Socket>) => ({ socket: factory }) as object;

/** Opens one connection past the circuit, runs `select 1` and closes it: the circuit's probe. */
function probeConnection(url: string, socketDir: string | null, role: string): () => Promise<void> {
  return async () => {
    const probe = postgres(url, {
      ...(socketDir ? { host: socketDir } : {}),
      max: 1,
      connect_timeout: CONNECT_TIMEOUT_MS / 1000,
      fetch_types: false,
      onnotice: () => undefined,
      connection: { application_name: applicationName(`${role}-probe`) },
      ...socketOption(async (target) => openSocket(target, 0)),
    });
    try {
      await probe`select 1`;
    } finally {
      await probe.end({ timeout: 0 });
    }
  };
}

/**
 * A postgres.js pool; a `?host=/socket/dir` in the URL (libpq's form, as pg reads it) selects a Unix
 * socket. Its connects pass the database's circuit (core/db/circuit.ts), shared by every pool of this
 * process to the same database; `log` records when it opens and closes.
 */
export function connect(
  url: string,
  options: { max: number; role: string; statementTimeoutMs?: number; settings?: Record<string, string>; log?: Logger },
): Sql {
  const parsed = new URL(url);
  const socketDir = parsed.searchParams.get('host');
  if (socketDir) parsed.searchParams.delete('host');
  const target = parsed.toString();
  let circuit = circuits.get(url);
  if (!circuit) {
    circuit = createCircuit(probeConnection(target, socketDir, options.role), options.log ?? createLogger('silent'));
    circuits.set(url, circuit);
  }
  const closedHooks = new Set<() => void>();
  const throughCircuit = circuitSocket(circuit);
  const sql = postgres(target, {
    ...(socketDir ? { host: socketDir } : {}),
    max: options.max,
    idle_timeout: 30,
    connect_timeout: CONNECT_TIMEOUT_MS / 1000,
    // The circuit paces reconnects; postgres.js's own backoff (up to 20 s) would hold each request that long.
    backoff: () => 0,
    ...socketOption(async (target) => {
      const socket = await throughCircuit(target);
      // Only the LISTEN connection is opened with onnotify.
      if (target.onnotify) socket.once('close', () => closedHooks.forEach((hook) => hook()));
      return socket;
    }),
    onnotice: () => undefined,
    connection: {
      application_name: applicationName(options.role),
      ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
      ...options.settings,
    },
  });
  circuitsBySql.set(sql, circuit);
  listenClosedHooks.set(sql, closedHooks);
  return sql;
}
