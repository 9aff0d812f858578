import { listKnob, numberKnob } from '../lib/knobs.ts';
import { round } from '../lib/stats.ts';

export const SEED = 1;
export const PARTS = new Set(listKnob('SUMMARIES_BENCH_PARTS', 'offline,llm,reading,quality'));
// Quality: the shares the real-world suite holds the generator to (test/summaries/offline-real.test.ts).
export const TARGET = { offlineMedianMs: 200, p95Ms: 20, tagPrecision: 0.75, momentCoverage: 0.65 };

// Offline generator
export const TRANSCRIPTS_PER_SIZE = 4;
export const WARMUP_SUMMARIES = 3;
export interface TranscriptSpec {
  id: string;
  label: string;
  minutes: number;
  style: 'auto' | 'manual';
  runs: number;
}
export const SPECS: TranscriptSpec[] = [
  { id: 'auto-30min', label: '30 min, auto captions', minutes: 30, style: 'auto', runs: 40 },
  { id: 'manual-30min', label: '30 min, manual captions', minutes: 30, style: 'manual', runs: 40 },
  { id: 'auto-2h', label: '2 h, auto captions', minutes: 120, style: 'auto', runs: 16 },
];

// LLM path
export const LLM = { contextTokens: 8192, concurrency: 2, model: 'bench-stand-in' }; // LLM_CONTEXT_TOKENS as asked, LLM_CONCURRENCY's default
export const LLM_RUNS: Record<string, number> = { 'auto-30min': 30, 'auto-2h': 12 };
export const MICRO_ITERATIONS = 200;
export const CHUNK_BUDGET = 5_000;

// Reading
export const SUMMARIES = numberKnob('SUMMARIES_BENCH_COUNT', 100_000);
export const CHANNELS = 2_000;
export const PRIVATE_ON_PUBLIC = Math.round(SUMMARIES * 0.035);
export const PRIVATE_ONLY = Math.round(SUMMARIES * 0.015);
export const FAILED = Math.round(SUMMARIES * 0.01);
export const GENERATING = Math.round(SUMMARIES * 0.005);
export const OWNERS = 50;
export const INSERT_BATCH = 10_000;
export const LANGUAGE_MIX: Array<[string, number]> = [
  ['en', 0.5],
  ['es', 0.14],
  ['fr', 0.12],
  ['ru', 0.1],
  ['de', 0.08],
  ['ja', 0.06],
];
export const CLIENTS = 8;
export const POOL_SIZE = 10; // DATABASE_POOL_SIZE's default, as the API process uses
export const PAGE_SIZE = 20; // the browse route's default limit
export const DEEP_PAGES = [480, 490, 500]; // page × 20 ≤ MAX_RESULT_WINDOW (10,000): the deepest pages served
export const ROUNDS = 2;
export const REQUESTS_PER_ROUND = 240;
export const ROUND_SECONDS = 1.5;
export const WARMUP_REQUESTS = 30;
/** Requests of one client alone per round: the latency without queueing behind the other clients. */
export const SINGLE_REQUESTS = 30;

export const ms = (value: number, digits = 1) => round(value, digits);

// ---------------------------------------------------------------------------------------------------
// Generated transcripts
