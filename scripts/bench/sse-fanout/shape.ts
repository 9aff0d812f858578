import { numberKnob } from '../lib/knobs.ts';

export const SESSIONS = numberKnob('SSE_FANOUT_SESSIONS', 10);
export const CLIENTS_PER_SESSION = numberKnob('SSE_FANOUT_CLIENTS_PER_SESSION', 100);
export const CLIENTS = SESSIONS * CLIENTS_PER_SESSION;
/** A second, lighter run with the same sessions: where one API process still keeps up, and the cost of one delivery. */
export const REFERENCE_CLIENTS_PER_SESSION = numberKnob('SSE_FANOUT_REFERENCE_CLIENTS_PER_SESSION', 25);
export const COMMITS_PER_SECOND = numberKnob('SSE_FANOUT_COMMITS_PER_SECOND', 20);
export const SECONDS = numberKnob('SSE_FANOUT_SECONDS', 20);
export const COMMITS = COMMITS_PER_SECOND * SECONDS;
/** Events per commit: 1 to 10 (one search:progress, then search:video), 5.5 on average. */
export const eventsInCommit = (seq: number) => 1 + ((seq * 7) % 10);
export const TARGET_P99_MS = 100;
export const TARGET_RSS_MIB = 250;
export const OPEN_FILES = 8_192;
export const CONNECT_TIMEOUT_MS = 60_000;
/** How long the clients may take after search:complete to have every event and a closed stream. */
export const FINISH_TIMEOUT_MS = 60_000;
export const CHANNEL_ID = 'UCbenchFanout1000clients'; // UC + 22
