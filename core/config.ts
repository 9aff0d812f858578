import { resolve } from 'node:path';
import { z } from 'zod';

const booleanFromEnv = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'expected true or false' })
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

const integerFromEnv = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, { message: `expected a whole number from ${min} to ${max}` })
    .transform(Number)
    .pipe(
      z
        .number()
        .min(min, { message: `expected at least ${min}` })
        .max(max, { message: `expected at most ${max}` }),
    );

const postgresUrl = z.string().regex(/^postgres(ql)?:\/\/.+/, { message: 'expected a postgres:// or postgresql:// connection URL' });

/**
 * What is wrong with `value` as a browser origin (scheme, host and port only, as a browser sends it in
 * `Origin`), or undefined when it is one.
 */
function originProblem(value: string): string | undefined {
  if (value === '*') return '"*" is not accepted: list the exact origins of the web apps that may call the API';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `"${value}" is not an origin: expected scheme and host, e.g. https://app.example.org`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `"${value}" is not an http(s) origin`;
  if (url.origin !== value)
    return `"${value}" is not an origin as a browser sends it: write ${url.origin} (no path, trailing slash, user, query or default port; lower case)`;
  return undefined;
}

/** Comma-separated exact origins; every problem is named, each entry on its own. */
const originListFromEnv = z
  .string()
  .transform((value) =>
    value
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry !== ''),
  )
  .superRefine((origins, ctx) => {
    for (const origin of origins) {
      const problem = originProblem(origin);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }
  });

/** Every setting the service reads from the environment; later features add theirs here. */
export const configSchema = z.object({
  PORT: integerFromEnv(0, 65535).default(8080).describe('HTTP port of the API'),
  HOST: z.string().min(1).default('127.0.0.1').describe('address to listen on (`0.0.0.0` to accept remote clients)'),
  DATA_DIR: z.string().min(1).default('./.afterimage').describe('where the embedded PostgreSQL (and later archives) live'),
  DATABASE_URL: postgresUrl.optional().describe('a `postgres://` URL; when set, no embedded PostgreSQL is started'),
  DATABASE_POOL_SIZE: integerFromEnv(1, 200).default(10).describe('connections per process'),
  LOG_LEVEL: z
    .enum(['debug', 'info', 'warn', 'error', 'silent'], { message: 'expected debug, info, warn, error or silent' })
    .default('info')
    .describe('`debug`, `info`, `warn`, `error` or `silent`; logs go to stderr'),
  LOG_FORMAT: z
    .enum(['auto', 'pretty', 'json'], { message: 'expected auto, pretty or json' })
    .default('auto')
    .describe(
      '`json`: one JSON object a line; `pretty`: time, level, message and `key=value` fields, for people; `auto`: pretty when stderr is a terminal, else JSON',
    ),
  WORKER_CONCURRENCY: integerFromEnv(1, 64).default(4).describe('jobs one worker process runs at once'),
  BODY_LIMIT_BYTES: integerFromEnv(1024, 64 * 1024 * 1024)
    .default(1024 * 1024)
    .describe('largest accepted request body'),
  TRUST_PROXY: booleanFromEnv.default(false).describe('take the client address from `X-Forwarded-For` (only behind your own proxy)'),
  METRICS_TOKEN: z
    .string()
    .min(16, { message: 'expected at least 16 characters (a random token, e.g. `openssl rand -hex 24`)' })
    .optional()
    .describe('serves `GET /metrics` (Prometheus) on the API port to scrapers sending `Authorization: Bearer <METRICS_TOKEN>`'),
  METRICS_PORT: integerFromEnv(0, 65535)
    .optional()
    .describe(
      'serves `GET /metrics` without a token on this port of `HOST`, apart from the API; each process (a worker too) needs its own',
    ),
  STATEMENT_TIMEOUT_MS: integerFromEnv(100, 3_600_000).default(15_000).describe('no query of the API or worker runs longer'),
  ARCHIVE_DIR: z
    .string()
    .min(1)
    .optional()
    .describe('a yt-dlp archive directory searched as a source (works offline); unset: `DATA_DIR/archive`'),
  YOUTUBE_API_KEY: z.string().min(1).optional().describe('enables the YouTube Data API v3 source'),
  YOUTUBE_API_URL: z
    .url({ message: 'expected an http(s) URL' })
    .default('https://www.googleapis.com/youtube/v3')
    .describe('base URL of the Data API (tests point it at a local server)'),
  WAYBACK_ENABLED: booleanFromEnv.default(false).describe('enables the Wayback Machine source (CDX index and archived pages)'),
  WAYBACK_URL: z.url({ message: 'expected an http(s) URL' }).default('https://web.archive.org').describe('base URL of the Wayback Machine'),
  YOUTUBE_CAPTIONS: booleanFromEnv
    .default(false)
    .describe("also fetch subtitles from the platform's own caption tracks (watch page, then timedtext)"),
  YOUTUBE_WEB_URL: z
    .url({ message: 'expected an http(s) URL' })
    .default('https://www.youtube.com')
    .describe('where watch pages and timedtext are read (a proxy, or a test server)'),
  SUBTITLE_BULK_MAX_BYTES: integerFromEnv(1024, 512 * 1024 * 1024)
    .default(20 * 1024 * 1024)
    .describe('most text (bytes) one bulk subtitle download may carry'),
  SOURCE_TIMEOUT_MS: integerFromEnv(100, 600_000).default(15_000).describe('timeout of each outbound request (retried with backoff)'),
  SOURCE_MAX_RESPONSE_BYTES: integerFromEnv(1024, 1024 * 1024 * 1024)
    .optional()
    .describe(
      'largest answer read from an upstream, decompressed (unset: 8 MiB Data API, 16 MiB watch pages and caption tracks, 32 MiB Wayback)',
    ),
  SOURCE_WAIT_BUDGET_MS: integerFromEnv(100, 600_000)
    .default(30_000)
    .describe('how long a crawl step (or a channel look-up) waits on a source that answers nothing before it goes on without it'),
  SSE_HEARTBEAT_SECONDS: integerFromEnv(1, 300).default(15).describe('comment lines that keep idle event streams open through proxies'),
  STATUS_WATCH_PROBE: booleanFromEnv
    .default(false)
    .describe('also probe video status on watch pages (through `YOUTUBE_WEB_URL`): tells why a video is gone'),
  YTDLP_PATH: z.string().min(1).optional().describe('a yt-dlp executable to probe video status with, when `STATUS_WATCH_PROBE` is off'),
  STATUS_CONFIRM_MINUTES: integerFromEnv(0, 7 * 24 * 60)
    .default(60)
    .describe('a deletion is recorded only when a probe this long after the first agrees'),
  STATUS_RECHECK_DAYS: integerFromEnv(1, 3650)
    .default(30)
    .describe('live videos older than 30 days are rechecked about this often (newer ones daily)'),
  EVIDENCE_RETENTION_DAYS: integerFromEnv(1, 365_000)
    .optional()
    .describe('kept answers of sources (evidence) older than this are dropped by the hourly cleanup; unset keeps them for ever'),
  TIMESTAMP_AUTHORITY_URL: z
    .url({ message: 'expected an http(s) URL, e.g. https://freetsa.org/tsr' })
    .optional()
    .describe(
      'an RFC 3161 time-stamping authority: every evidence bundle exported gets its token over the manifest (`timestamp.tsr`); unset: bundles carry no timestamp',
    ),
  STATUS_CHECKS_PER_MINUTE: integerFromEnv(50, 1_000_000)
    .default(5_000)
    .describe('most videos the scheduler queues for a check each minute'),
  RECRAWL_HOURS: integerFromEnv(1, 24 * 365)
    .default(24)
    .describe('channels are crawled again for new uploads this long after their last crawl'),
  TYPESENSE_URL: z
    .url({ message: 'expected an http(s) URL, e.g. http://localhost:8108' })
    .optional()
    .describe('search with Typesense (e.g. `http://localhost:8108`) instead of Postgres full-text search'),
  TYPESENSE_API_KEY: z.string().min(1).optional().describe("Typesense's API key"),
  TYPESENSE_COLLECTION: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, { message: 'expected letters, digits, _ or - (at most 64)' })
    .default('videos')
    .describe('the alias searched; `npx afterimage reindex` builds a new collection behind it'),
  FTS_TIMEOUT_MS: integerFromEnv(50, 600_000)
    .default(3_000)
    .describe('a full-text query running longer is stopped (503 `SERVICE_UNAVAILABLE`, saying how to narrow it)'),
  CORS_ORIGINS: originListFromEnv
    .default([])
    .describe(
      'comma-separated exact origins (`https://app.example.org,http://localhost:5173`) whose pages may call `/api` and `/mcp` from a browser; unset: none. Each is checked at start-up (scheme and host only, as a browser sends `Origin`; `*` is refused). See [Browsers](api/REFERENCE.md#browsers-cors-and-stream-tokens)',
    ),
  REGISTRATION: z
    .enum(['open', 'closed'], { message: 'expected open or closed' })
    .default('closed')
    .describe(
      '`open`: anyone may create an account (registered tier) at `/register`; `closed`: the operator creates them (`npx afterimage users create`)',
    ),
  PASSWORD_HASH_COST: integerFromEnv(10, 20)
    .default(15)
    .describe(
      "scrypt's cost for password hashes as log2 N (r=8, p=3): 15, OWASP's, takes about a third of a second of a core; each step down halves what a guess costs an attacker, so lower it only for tests or a very small machine. Hashes of another cost still verify and are made again at their next sign-in",
    ),
  SECRET_KEY: z
    .string()
    .min(32, { message: 'expected at least 32 characters, e.g. the output of `openssl rand -base64 32`' })
    .optional()
    .describe(
      'seals webhook secrets and derives private feed URLs; every process of a deployment needs the same one. Unset: a key kept in `DATA_DIR/secret.key`',
    ),
  WATCH_RECRAWL_HOURS: integerFromEnv(1, 24 * 365)
    .default(6)
    .describe('watched channels are crawled again at least this often (other channels every `RECRAWL_HOURS`)'),
  WEBHOOK_ALLOW_PRIVATE: booleanFromEnv
    .default(false)
    .describe('let webhooks reach private and loopback addresses (home networks, tests); off: only public addresses'),
  PUBLIC_URL: z
    .url({ message: 'expected an http(s) URL, e.g. https://archive.example.org' })
    .optional()
    .describe("the address the public reaches the service at, for the sitemap's absolute URLs; unset: the request's `Host`"),
  LLM_BASE_URL: z
    .url({ message: 'expected an http(s) URL, e.g. https://api.openai.com/v1 or http://localhost:11434/v1' })
    .optional()
    .describe(
      'an OpenAI-compatible endpoint that writes summaries (see [AI summaries](#ai-summaries-and-stenograms)); unset: the built-in offline generator',
    ),
  LLM_API_KEY: z.string().min(1).optional().describe("the endpoint's key (never logged)"),
  LLM_MODEL: z.string().min(1).default('gpt-4o-mini').describe('the model asked; recorded as `llmModel` with every summary'),
  LLM_CONTEXT_TOKENS: integerFromEnv(2048, 10_000_000)
    .default(8192)
    .describe("the model's context window: longer transcripts are summarised in chunks that fit, then combined"),
  LLM_CONCURRENCY: integerFromEnv(1, 64).default(2).describe('LLM calls in flight at once, per worker process'),
  LLM_TIMEOUT_MS: integerFromEnv(1_000, 3_600_000).default(120_000).describe("one LLM call's time limit (then retried with backoff)"),
  STENOGRAM_STORE: z
    .string()
    .regex(/^(file|s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/[\w!.*'()/-]*)?)$/, {
      message: 'expected file or s3://bucket/optional/prefix',
    })
    .default('file')
    .describe("where stenograms' Markdown lives: `file` (`DATA_DIR/stenograms`) or `s3://bucket/optional/prefix` for several machines"),
  S3_ENDPOINT: z
    .url({ message: 'expected an http(s) URL, e.g. http://localhost:9000' })
    .optional()
    .describe('an S3-compatible server (MinIO, Ceph, R2…); unset: AWS'),
  S3_REGION: z.string().min(1).default('us-east-1').describe("the bucket's region"),
  S3_ACCESS_KEY_ID: z.string().min(1).optional().describe("the bucket's access key; unset: the AWS SDK's default credential chain"),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional().describe('the secret of `S3_ACCESS_KEY_ID`'),
  S3_FORCE_PATH_STYLE: booleanFromEnv
    .optional()
    .describe('path-style bucket addressing (endpoint/bucket rather than bucket.endpoint); unset: `true` when `S3_ENDPOINT` is set'),
});

type RawConfig = z.output<typeof configSchema>;
export type Config = RawConfig & { dataDir: string; archiveDir: string };

/** Names of settings whose values are secrets: never printed or logged as they are. */
const secretSettings = new Set<keyof RawConfig>([
  'DATABASE_URL',
  'YOUTUBE_API_KEY',
  'TYPESENSE_API_KEY',
  'LLM_API_KEY',
  'S3_SECRET_ACCESS_KEY',
  'SECRET_KEY',
  'METRICS_TOKEN',
]);

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
  }
}

/** Reads the environment; unset and empty variables take their defaults. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const input: Record<string, string> = {};
  for (const key of Object.keys(configSchema.shape)) {
    const value = env[key];
    if (value !== undefined && value !== '') input[key] = value;
  }
  const parsed = configSchema.safeParse(input);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        const key = String(issue.path[0]);
        const given = input[key];
        const shown =
          given === undefined ? '' : `, got ${JSON.stringify(secretSettings.has(key as keyof RawConfig) ? maskSecret(given) : given)}`;
        return `${key}: ${issue.message}${shown}`;
      }),
    );
  }
  const dataDir = resolve(parsed.data.DATA_DIR);
  return { ...parsed.data, dataDir, archiveDir: resolve(parsed.data.ARCHIVE_DIR ?? `${dataDir}/archive`) };
}

/** Hides the password of a URL (in its user part or a `password` parameter, as libpq takes it), or the whole value when it is not a URL. */
function maskSecret(value: string): string {
  try {
    const url = new URL(value);
    if (url.password) url.password = '****';
    if (url.searchParams.has('password')) url.searchParams.set('password', '****');
    return url.toString();
  } catch {
    return '****';
  }
}

/** The effective configuration with secrets masked, for `afterimage config` and logs. */
export function describeConfig(config: Config): Record<string, string | number | boolean | null> {
  const described: Record<string, string | number | boolean | null> = {};
  for (const key of Object.keys(configSchema.shape) as (keyof RawConfig)[]) {
    const value = config[key];
    described[key] =
      value === undefined ? null : secretSettings.has(key) ? maskSecret(String(value)) : Array.isArray(value) ? value.join(',') : value;
  }
  described.DATA_DIR = config.dataDir;
  described.ARCHIVE_DIR = config.archiveDir;
  return described;
}

/** README's table of settings, written from the schema's own defaults and descriptions (`npm run docs`). */
export function configTable(): string {
  const rows = Object.entries(configSchema.shape).map(([key, schema]) => {
    const fallback = schema.safeParse(undefined);
    const unset = !fallback.success || fallback.data === undefined || (Array.isArray(fallback.data) && fallback.data.length === 0);
    const shown = unset ? 'unset' : `\`${String(fallback.data)}\``;
    const secret = secretSettings.has(key as keyof RawConfig) ? ' (a secret: masked everywhere)' : '';
    return `| \`${key}\` | ${shown} | ${schema.description ?? ''}${secret} |`;
  });
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
}
