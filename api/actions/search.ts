/**
 * Channel search as callers use it: start (or join) a channel's crawl, follow a session's stream, load the
 * next page of archive results. POST /api/search…, the search and channel pages, and the search_channel
 * tool perform these.
 */
import type { ServerResponse } from 'node:http';
import { continueSearch as continueCrawl, searchChannel } from '../../core/crawl/startSearch.ts';
import { findSession, type SearchSession, snapshotCountThrough, snapshotHolds, snapshotPages } from '../../core/crawl/searchSession.ts';
import type { Sql } from '../../core/db/database.ts';
import { notFound } from '../../core/errors.ts';
import { crawlStream, positionOf, streamHead, type Position } from '../../core/events/events.ts';
import { callerUserId, type Caller } from '../http/guard.ts';
import { handled } from '../http/route.ts';
import {
  answerNothingMore,
  channelResolvedFrame,
  crawlFrames,
  notOfThisStream,
  parseResume,
  snapshotDoneFrame,
  snapshotFrames,
  openEventStream,
} from '../sse/writer.ts';
import { defineAction } from '../http/route.ts';

const searching = { scope: 'L1', feature: 'channelSearch' } as const;

/**
 * Parse, charge channelSearchesPerHour, resolve, start or join the crawl. A channel no source knows ends
 * 404, and the guard gives the unit back.
 */
export const startSearch = defineAction({
  what: 'channel search',
  access: { ...searching, charges: ['channelSearchesPerHour'] },
  run({ deps, caller, charge, log }, query: string) {
    return searchChannel(
      { sql: deps.sql, sources: deps.sources, log, sourceWaitBudgetMs: deps.config.SOURCE_WAIT_BUDGET_MS },
      { query, userId: callerUserId(caller) },
      async () => void (await charge('channelSearchesPerHour')),
    );
  },
});

/** The caller's session; another account's is as unknown as a missing one. */
export async function callersSession(sql: Sql, caller: Caller, sessionId: string): Promise<SearchSession> {
  const session = await findSession(sql, sessionId, callerUserId(caller));
  if (!session) throw notFound(`no search session ${sessionId}`);
  return session;
}

/** "Continue" of the caller's session: the next page of archive look-ups as a new session, charged as channelSearchesPerHour. */
export const continueSearch = defineAction({
  what: 'channel search',
  access: { ...searching, charges: ['channelSearchesPerHour'] },
  run({ deps, caller, charge }, session: SearchSession) {
    return continueCrawl(
      deps,
      { sessionId: session.id, channelId: session.channelId, userId: callerUserId(caller) },
      async () => void (await charge('channelSearchesPerHour')),
    );
  },
});

/**
 * Where a reconnecting client resumes: after a video of the session's snapshot (`snapshot`), or
 * after a position in its crawl's events (`live`; the snapshot-done point is where the session
 * joined); undefined: from the start. A point of another session, or of the crawl from before the
 * session joined it, would skip (or repeat) this one's events, so it is refused like a malformed one.
 */
async function resumePoint(
  sql: Sql,
  session: SearchSession,
  given: string | undefined,
): Promise<{ phase: 'snapshot'; after: string } | { phase: 'live'; after: Position } | undefined> {
  if (!given) return undefined;
  const resume = parseResume(given);
  if (resume?.phase === 'snapshot' && (resume.after === '' || (await snapshotHolds(sql, session, resume.after)))) return resume;
  if (resume?.phase === 'snapshotDone') return { phase: 'live', after: session.joinSeq };
  const position = resume?.phase === 'live' ? await positionOf(sql, crawlStream(session.crawlId), resume.eventId) : undefined;
  if (position !== undefined && position > session.joinSeq) return { phase: 'live', after: position };
  throw notOfThisStream(given);
}

/** A session's stream: what is stored at once, then what the crawl finds, resumed after `resumeFrom` when given. */
export const followSearch = defineAction({
  what: 'channel search',
  access: searching,
  async run(
    { deps },
    { res, session, resumeFrom }: { res: ServerResponse; session: SearchSession; resumeFrom: string | undefined },
  ): Promise<typeof handled> {
    const resume = await resumePoint(deps.sql, session, resumeFrom);
    const live: Position = resume?.phase === 'live' ? resume.after : session.joinSeq;
    const finished = async () => session.crawlFinished && (await streamHead(deps.sql, crawlStream(session.crawlId))) <= live;
    // Resumed after the final event of a finished crawl (or after the stored part of a session that joined it finished): nothing more will come.
    if (resume?.phase === 'live' && (await finished())) {
      answerNothingMore(res);
      return handled;
    }

    let unsubscribe = () => {};
    const stream = openEventStream(res, deps.config.SSE_HEARTBEAT_SECONDS, deps.openStreams, () => unsubscribe());

    if (!resume || resume.phase === 'snapshot') {
      if (!resume) stream.write(channelResolvedFrame(session.channel));
      // The progress counts every stored video of the session, those sent before a reconnect too.
      let total = resume?.after ? await snapshotCountThrough(deps.sql, session, resume.after) : 0;
      for await (const page of snapshotPages(deps.sql, session, resume?.after ?? '')) {
        if (!stream.open) return handled;
        stream.write(snapshotFrames(page));
        // The stored part is read at the client's pace, so it never counts as falling behind.
        await stream.drained();
        total += page.length;
      }
      stream.write(snapshotDoneFrame(total));
    }

    // The stored part of a session that joined a finished crawl: its reconnect (after s:~) gets 204.
    if (await finished()) {
      stream.end();
      return handled;
    }
    unsubscribe = deps.hub.subscribe(
      crawlStream(session.crawlId),
      live,
      (events) => {
        const { frames, final } = crawlFrames(events);
        stream.write(frames);
        if (final) stream.end();
      },
      stream.drained,
    );
    if (!stream.open) unsubscribe();
    return handled;
  },
});
