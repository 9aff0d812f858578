import { numberKnob } from '../lib/knobs.ts';

/** The channel's size; CHANNEL_CRAWL_VIDEOS runs it smaller. */
export const VIDEOS = numberKnob('CHANNEL_CRAWL_VIDEOS', 20_000);
export const TARGET_VIDEOS_PER_SECOND = 2_000;
export const WORKER_CONCURRENCY = 4; // the default; a crawl's steps run one after another anyway
export const CRAWL_TIMEOUT_MS = 150_000;
/** BATCH_VIDEOS of core/crawl/fetchBatch.ts (not exported): what one step stores. */
export const PRODUCTION_BATCH = 500;
export const WHAT_IF_BATCH = 2_000;
export const CHANNEL_ID = 'UCbenchCrawl20kVideos000'; // UC + 22
export const CHANNEL_HANDLE = '@benchcrawl20k';

export type SourceKind = 'youtube_api' | 'archive';

export interface CrawlRun {
  source: SourceKind;
  label: string;
  /** Generating the source's data (the archive directory, the stand-in's channel), ms; not in the crawl time. */
  setupMs: number;
  videosExpected: number;
  videosStored: number;
  /** Distinct live (c:) search:video ids on the stream. */
  videosStreamed: number;
  finalEvent: string;
  /** POST /api/search sent → search:complete read. */
  endToEndSeconds: number;
  videosPerSecond: number;
  /**
   * Warming the sources up at process start (the archive's index), before the search: the worker's
   * ('afterimage ready' → 'source ready') and the API's, ms. Not in the crawl time: a started service has done it.
   */
  warmUpMs: { worker: number; api: number };
  /** POST /api/search round trip (resolving the channel through the sources, opening the crawl). */
  postMs: number;
  /** POST sent → first search:video on the stream. */
  firstVideoSeconds: number;
  /** First search:video → search:complete, and the rate within it. */
  streamingSeconds: number;
  streamingVideosPerSecond: number;
  /** crawls.started_at → finished_at, as the database saw it. */
  crawlSeconds: number;
  /** Steps (one search:progress each, i.e. one crawl_channel job that stored a batch), per source. */
  crawlJobs: number;
  jobsBySource: Record<string, number>;
  /** Time between consecutive steps' store transactions (their now()), ms. */
  stepIntervalMs: { median: number; p90: number; max: number } | null;
  worker: { baselineRssMiB: number; peakRssMiB: number; maxSampledRssMiB: number; cpuSeconds: number | null };
  /**
   * CPU during the crawl, seconds: the worker, PostgreSQL, this process (API + SSE reader + Data API
   * stand-in), the whole machine, and what other processes of the machine used meanwhile (a disturbance gauge).
   */
  cpuSeconds: { worker: number | null; postgres: number | null; harness: number; machine: number | null; other: number | null };
  /** RSS of this process (which runs the API) around POST /api/search: what resolving the channel through the sources kept. */
  harnessRssMiB: { beforePost: number; afterPost: number };
  sourceRequests: Record<string, number> | null;
  /** Jobs of other tasks waiting or running when the crawl completed (e.g. subtitle fetches the crawl enqueued), by task. */
  otherJobsQueued: Record<string, number>;
  workerWarnings: string[];
}

export interface Replay {
  source: SourceKind;
  /** Building the source's view of the channel before the first page (the archive's index scan; channels.list), ms. */
  resolveMs: number;
  /** Every page of the channel, one after another, ms (no database). */
  listMs: number;
  pages: number;
  videos: number;
  /** Store transactions by batch size: upsertVideos + appendEvents (+ caption_info) + commit. */
  store: Array<{
    batch: number;
    transactions: number;
    totalMs: number;
    perTransactionMs: number;
    upsertMs: number;
    eventsMs: number;
    commitMs: number;
    perVideoUs: number;
    statementsMs: Record<string, number>;
  }>;
  /** Bytes of one search:video payload as stored (JSON text), on average. */
  eventBytes: number;
}
