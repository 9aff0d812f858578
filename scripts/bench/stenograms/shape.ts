import type { StenogramInput } from '../../../core/stenograms/stenogram.ts';
import { fakeChannelId } from '../../../test/kit/ids.ts';
import type { Conversation } from '../lib/corpus.ts';
import { listKnob, numberKnob } from '../lib/knobs.ts';

export const SEED = 1;
export const PARTS = new Set(listKnob('STENOGRAMS_PARTS', 'offline,streams'));

// Offline generator
export const INPUTS_PER_SIZE = 4;
interface SizeSpec {
  id: string;
  label: string;
  minutes: number;
  runs: number;
}
export const SIZES: SizeSpec[] = [
  { id: '2h', label: '2 h', minutes: 120, runs: 60 },
  { id: '30min', label: '30 min', minutes: 30, runs: 200 },
];

// Concurrent streams
export const STREAMS = numberKnob('STENOGRAMS_STREAMS', 50);
/** Streams are spread over this many users (one L3 key each): one stenogram per user and video. */
export const USERS = numberKnob('STENOGRAMS_USERS', 10);
export const WORKER_CONCURRENCY = numberKnob('STENOGRAMS_WORKER_CONCURRENCY', 4);
export const ROUND_MINUTES = listKnob('STENOGRAMS_ROUND_MINUTES', '30,120')
  .map(Number)
  .filter((minutes) => minutes > 0);
export const STENOGRAMS_PER_DAY = 1_000; // raised from the Pro tier's 10 per key, still charged
export const STREAM_TIMEOUT_MS = 120_000;
/** The what-if of the first round: a transaction with an xid held open this long while one stream runs. */
export const HOLD_MS = 2_000;
export const CHANNEL_ID = fakeChannelId('bench:stenograms');

// ---------------------------------------------------------------------------------------------
// Transcripts

export const inputOf = (videoId: string, minutes: number, generated: Conversation): StenogramInput => ({
  videoId,
  title: `A ${minutes}-minute conversation`,
  channelTitle: 'Bench stenograms',
  language: 'en',
  cues: generated.cues,
});

// ---------------------------------------------------------------------------------------------
// Part 1: the offline generator, in a child process per size
