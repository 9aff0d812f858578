/**
 * Evidence: a video's or a watchlist's record as a bundle anyone can check offline (core/evidence/), the
 * raw answers behind its observations, and the check itself. GET /api/videos/:videoId/evidence, GET
 * /api/watchlists/:id/evidence, the video page's links and the /evidence/verify page perform these.
 */
import { notFound } from '../../core/errors.ts';
import { writeBundle, watchlistVideoIds, type BundleSubject } from '../../core/evidence/bundle.ts';
import { rawAnswer } from '../../core/evidence/observations.ts';
import { bufferBytes } from '../../core/evidence/readZip.ts';
import { verifyBundle, type Verdict } from '../../core/evidence/verifyBundle.ts';
import { findOwnWatchlist } from '../../core/watchlists/ownWatchlist.ts';
import { drained, sendAnswer } from '../http/representation.ts';
import { defineAction, handled, privateCache, type ActionContext, type Exchange } from '../http/route.ts';
import { watchlistOwner } from './watchlists.ts';

/** The bundle streamed as the answer, read in one read-only snapshot: one state, however long the download. */
async function sendBundle({ deps }: ActionContext, exchange: Exchange, subject: BundleSubject, fileName: string): Promise<typeof handled> {
  const { res } = exchange;
  res.writeHead(200, {
    'Content-Type': 'application/zip',
    'Content-Disposition': `attachment; filename="${fileName}"`,
    'Cache-Control': 'private, no-store',
  });
  const gone = new Error('the client left before the bundle was sent');
  try {
    await deps.sql.begin('isolation level repeatable read read only', (tx) =>
      writeBundle(tx, subject, async (chunk) => {
        if (res.destroyed) throw gone;
        res.write(chunk);
        await drained(res);
      }),
    );
    res.end();
  } catch (error) {
    // Once the ZIP has begun no error envelope can follow: a cut answer fails its check, and is logged.
    if (error !== gone) throw error;
    res.destroy();
  }
  return handled;
}

/** A video's evidence bundle; counts one subtitleDownloadsPerDay, like a subtitle file. */
export const downloadVideoEvidence = defineAction({
  what: 'evidence bundles',
  access: { scope: 'L1', feature: 'statusHistory', charges: ['subtitleDownloadsPerDay'] },
  async run(ctx, { exchange, videoId }: { exchange: Exchange; videoId: string }): Promise<typeof handled> {
    const [video] = await ctx.deps.sql`select 1 from videos where video_id = ${videoId}`;
    if (!video) throw notFound(`no video ${videoId} is kept in the archive; search for its channel to find it`);
    await ctx.charge('subtitleDownloadsPerDay');
    return sendBundle(ctx, exchange, { kind: 'video', videoId }, `${videoId}.evidence.zip`);
  },
});

/** A watchlist's evidence bundle, its owner's alone (anybody else: 404); counts one subtitleDownloadsPerDay per video in it. */
export const downloadWatchlistEvidence = defineAction({
  what: 'evidence bundles',
  access: { scope: 'L1', feature: 'watchlists', charges: ['subtitleDownloadsPerDay'] },
  async run(ctx, { exchange, id }: { exchange: Exchange; id: string }): Promise<typeof handled> {
    const watchlist = await findOwnWatchlist(ctx.deps.sql, watchlistOwner(ctx.caller), id);
    if (!watchlist) throw notFound(`no watchlist ${id} of yours; GET /api/watchlists lists them`);
    const videoIds = await watchlistVideoIds(ctx.deps.sql, watchlist.id);
    await ctx.charge('subtitleDownloadsPerDay', Math.max(videoIds.length, 1));
    return sendBundle(
      ctx,
      exchange,
      { kind: 'watchlist', id: watchlist.id, name: watchlist.name, videoIds },
      `watchlist-${watchlist.id}.evidence.zip`,
    );
  },
});

/**
 * What a source answered, as it came, always as plain text (an HTML page is shown, never rendered here);
 * its own content type is in X-Original-Content-Type.
 */
export const readRawAnswer = defineAction({
  what: 'status history',
  access: { scope: 'L1', feature: 'statusHistory' },
  async run(
    { deps },
    { exchange, videoId, observationId }: { exchange: Exchange; videoId: string; observationId: string },
  ): Promise<typeof handled> {
    const answer = await rawAnswer(deps.sql, videoId, observationId);
    // Never changes: tagged by its hash, so a client that has it is answered 304.
    await sendAnswer(exchange, answer.body, {
      contentType: 'text/plain; charset=utf-8',
      cache: privateCache,
      headers: {
        'X-Content-Type-Options': 'nosniff',
        ...(answer.contentType ? { 'X-Original-Content-Type': answer.contentType } : {}),
      },
    });
    return handled;
  },
});

/** The check of an uploaded bundle, in memory: nothing of it is written anywhere. */
export const verifyEvidence = defineAction({
  what: 'checking evidence bundles',
  access: {},
  run: async (_ctx, bundle: Uint8Array): Promise<Verdict> => verifyBundle(bufferBytes(bundle)),
});
