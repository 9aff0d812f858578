import type { FtsFilters, FtsSort } from '../../../core/fts/backend.ts';
import type { QueryClass } from '../../../test/kit/corpus-queries.ts';
import { numberKnob } from '../lib/knobs.ts';
import type { Sample } from '../lib/load.ts';

export const VIDEOS = numberKnob('FTS_BENCH_VIDEOS', 1_000_000);
/** 30-minute transcripts of the subtitle phase (scripts/bench/fts/subtitles.ts): at most one video in ten; 0 skips it. */
export const TRANSCRIPTS = Math.min(numberKnob('FTS_BENCH_TRANSCRIPTS', 100_000), Math.floor(VIDEOS / 10));
export const SEED = 1;
export const CLIENTS = 8;
export const PAGE_SIZE = 50;
/** Requests per cell and engine, unless CELL_SECONDS runs out first. */
export const REQUESTS_PER_CELL = numberKnob('FTS_BENCH_REQUESTS', 240);
export const CELL_SECONDS = numberKnob('FTS_BENCH_CELL_SECONDS', 20);
export const INGEST_CONNECTIONS = 2;
export const POOL_SIZE = 10; // DATABASE_POOL_SIZE's default, as the API process uses
export const EXACT_TOTAL_CAP = 10_000; // the Postgres backend counts exactly up to this many matches; SQLite is held to the same
export const TARGET = { p95Ms: 50, p50Ms: 10, ingestPerSecond: 5_000, httpAddsP50Ms: 5 };
export const ENGINES = ['backend', 'http', 'sqlite'] as const;
export type EngineId = (typeof ENGINES)[number];

export interface BenchRequest {
  q: string;
  filters: FtsFilters;
  sort: FtsSort;
  in?: 'subtitles';
}
export interface Answer {
  ids: string[];
  total: number;
}
export interface Engine {
  id: EngineId;
  search(request: BenchRequest): Promise<Answer>;
  close(): Promise<void>;
}

export interface CellResult {
  class: QueryClass;
  filtered: boolean;
  sort: FtsSort;
  engine: EngineId;
  requests: BenchRequest[];
  sample: Sample;
}

// ---------------------------------------------------------------------------------------------------
// SQLite FTS5
