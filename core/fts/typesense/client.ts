import pRetry from 'p-retry';
import { Client } from 'typesense';
import { ConfigError, type Config } from '../../config.ts';
import { AppError } from '../../errors.ts';
import type { Logger } from '../../log.ts';

/** Where the index lives and how hard to try: the alias searches and updates go through. */
export interface TypesenseTarget {
  client: Client;
  alias: string;
  url: string;
  retries: number;
  minDelayMs: number;
  log: Logger;
}

export interface TargetOptions {
  /** search: short timeout (FTS_TIMEOUT_MS), few quick retries; indexing: long timeout, patient retries. */
  purpose: 'search' | 'indexing';
  retries?: number;
  minDelayMs?: number;
}

/** The configured Typesense, or undefined without TYPESENSE_URL; a URL without a key is a configuration error. */
export function typesenseTarget(config: Config, log: Logger, options: TargetOptions): TypesenseTarget | undefined {
  if (!config.TYPESENSE_URL) return undefined;
  if (!config.TYPESENSE_API_KEY) {
    throw new ConfigError([
      'TYPESENSE_API_KEY: required when TYPESENSE_URL is set (the admin API key the Typesense server was started with)',
    ]);
  }
  const url = config.TYPESENSE_URL.replace(/\/+$/, '');
  const search = options.purpose === 'search';
  const client = new Client({
    nodes: [{ url }],
    apiKey: config.TYPESENSE_API_KEY,
    // Retries are ours (p-retry, below), so that only transient failures are retried.
    numRetries: 0,
    connectionTimeoutSeconds: search ? config.FTS_TIMEOUT_MS / 1000 : 120,
    logLevel: 'silent',
  });
  return {
    client,
    alias: config.TYPESENSE_COLLECTION,
    url,
    retries: options.retries ?? (search ? 2 : 4),
    minDelayMs: options.minDelayMs ?? (search ? 100 : 1_000),
    log,
  };
}

/** The retry settings a caller gave, leaving out those it did not (so the purpose's defaults apply). */
export const retryOverrides = ({ retries, minDelayMs }: { retries?: number; minDelayMs?: number }) => ({
  ...(retries === undefined ? {} : { retries }),
  ...(minDelayMs === undefined ? {} : { minDelayMs }),
});

/** A filter value: backticks keep any character literal. */
export const literal = (value: string) => `\`${value}\``;

// Calls: retried when transient, and failures turned into messages that say what to check.

interface TypesenseFailure {
  httpStatus?: number;
  code?: string;
  message?: string;
}

const statusOf = (error: unknown) => (error as TypesenseFailure).httpStatus;
const isTransient = (error: unknown) => {
  const status = statusOf(error);
  return status === undefined || status === 429 || status >= 500;
};

function describeFailure(error: unknown, target: TypesenseTarget, what: string): AppError {
  if (error instanceof AppError) return error;
  const status = statusOf(error);
  const at = `Typesense at ${target.url}`;
  const said = String((error as TypesenseFailure).message ?? error).replace(/^Request failed with HTTP code \d+ \| Server said: /, '');
  if (status === undefined) {
    const code = (error as TypesenseFailure).code;
    const reason = code === 'ECONNABORTED' || code === 'ETIMEDOUT' ? 'no answer in time' : (code ?? said);
    return new AppError(
      'SERVICE_UNAVAILABLE',
      `${at} did not answer (${reason}) to ${what}: check that the Typesense server runs and that TYPESENSE_URL points at it`,
    );
  }
  if (status === 401 || status === 403)
    return new AppError('SERVICE_UNAVAILABLE', `${at} refused the API key (HTTP ${status}) to ${what}: check TYPESENSE_API_KEY`);
  if (status === 404) {
    const field = /filter field named `([^`]*)`/.exec(said)?.[1];
    if (field) {
      return new AppError(
        'SERVICE_UNAVAILABLE',
        `${at}: the collection behind "${target.alias}" has no field "${field}", which this version searches (it was built by an older one), to ${what}: run \`npx afterimage reindex\` to rebuild it`,
      );
    }
    return new AppError(
      'SERVICE_UNAVAILABLE',
      `${at} has no usable collection "${target.alias}" (${said}) to ${what}: run \`npx afterimage reindex\` to build the search index`,
    );
  }
  if (status === 429 || status >= 500) {
    return new AppError(
      'SERVICE_UNAVAILABLE',
      `${at} failed (HTTP ${status}: ${said}) to ${what}, also after ${target.retries} retries: check the Typesense server's log, memory and disk`,
    );
  }
  return new AppError('INTERNAL_ERROR', `${at} rejected the request (HTTP ${status}: ${said}) to ${what}`);
}

/** Runs one client call with backoff on transient failures; an HTTP status listed in `expected` gives its value instead. */
export async function call<T, U = never>(
  target: TypesenseTarget,
  what: string,
  request: () => Promise<T>,
  expected: Record<number, () => U> = {},
): Promise<T | U> {
  try {
    return await pRetry(request, {
      retries: target.retries,
      minTimeout: target.minDelayMs,
      factor: 2,
      randomize: true,
      shouldRetry: ({ error }) => isTransient(error),
      onFailedAttempt: ({ error, attemptNumber, retriesLeft }) => {
        if (isTransient(error) && retriesLeft > 0)
          target.log.warn('Typesense request failed, retrying', { what, attempt: attemptNumber, err: error });
      },
    });
  } catch (error) {
    const status = statusOf(error);
    if (status !== undefined && expected[status]) return expected[status]();
    throw describeFailure(error, target, what);
  }
}
