/**
 * The events of a watchlist's stream (`watchlist:<id>` in the event log, read over SSE at
 * GET /api/watchlists/:id/stream): one per change the watchlist watches, named by the change's type,
 * its payload the change as every view shows it (core/watchlists/change.ts).
 */
import { defineEvent, type EventDefinition, type EventVocabulary } from '../events/defineEvent.ts';
import { changeSchema, changeType, type Change, type ChangeType } from './change.ts';

export const watchlistStream = (watchlistId: string) => `watchlist:${watchlistId}`;

// Payloads are presented from the log by presentChange, whose output the schema describes; a test parses them.
const watchlistEvents = Object.fromEntries(
  changeType.options.map((type) => [type, defineEvent(type, changeSchema.describe(`a ${type} change`), { parse: false })]),
) as { [T in ChangeType]: EventDefinition<T, typeof changeSchema> };

/** The event that reports `change` on a watchlist's stream. */
export const changeEvent = (change: Change) => watchlistEvents[change.type](change);

export const watchlistEventVocabulary: EventVocabulary = { name: 'WatchlistEvent', events: Object.values(watchlistEvents) };
