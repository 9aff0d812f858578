/**
 * Evidence: a video's or a watchlist's record as a bundle anyone can check offline (core/evidence/), the
 * raw answers behind its observations, and the check itself. GET /api/videos/:videoId/evidence, GET
 * /api/watchlists/:id/evidence, the video page's links, the get_evidence tool and the /evidence/verify
 * page perform these: an export action checks and charges, then its surface sends the bundle
 * (`sendBundle`) or describes it (`describeBundle`).
 */
import type { Config } from '../../core/config.ts';
import { notFound } from '../../core/errors.ts';
import { writeBundle, watchlistVideoIds, type BundleSubject, type Timestamping } from '../../core/evidence/bundle.ts';
import { keptObservations, rawAnswer, unkeptObservationCount } from '../../core/evidence/observations.ts';
import { bufferBytes } from '../../core/evidence/readZip.ts';
import { requestTimestamp } from '../../core/evidence/timestamp.ts';
import { verifyBundle, type Verdict } from '../../core/evidence/verifyBundle.ts';
import { metadataVersions, subtitleVersionRecord, subtitleVersions } from '../../core/evidence/versions.ts';
import { statusHistory } from '../../core/status/statusHistory.ts';
import { findOwnWatchlist } from '../../core/watchlists/ownWatchlist.ts';
import { drained, sendAnswer } from '../http/representation.ts';
import { defineAction, handled, privateCache, type ActionContext, type Exchange } from '../http/route.ts';
import { watchlistOwner } from './watchlists.ts';

/** A bundle an action allowed and charged: what it holds and the name it is downloaded as. */
export interface EvidenceExport {
  subject: BundleSubject;
  fileName: string;
}

/** The authority named in a manifest: TIMESTAMP_AUTHORITY_URL's origin and path (no credentials or query). */
function timestamping(config: Config, ask: boolean): Timestamping | undefined {
  const url = config.TIMESTAMP_AUTHORITY_URL;
  if (!url) return undefined;
  const { origin, pathname } = new URL(url);
  return { authority: `${origin}${pathname}`, ...(ask ? { request: (manifest: Uint8Array) => requestTimestamp(url, manifest) } : {}) };
}

const snapshot = 'isolation level repeatable read read only';

/** The bundle streamed as the answer, read in one read-only snapshot: one state, however long the download. */
export async function sendBundle(
  { deps, log }: Pick<ActionContext, 'deps' | 'log'>,
  exchange: Exchange,
  { subject, fileName }: EvidenceExport,
): Promise<typeof handled> {
  const { res } = exchange;
  res.writeHead(200, {
    'Content-Type': 'application/zip',
    'Content-Disposition': `attachment; filename="${fileName}"`,
    'Cache-Control': 'private, no-store',
  });
  const gone = new Error('the client left before the bundle was sent');
  try {
    const exported = await deps.sql.begin(snapshot, (tx) =>
      writeBundle(
        tx,
        subject,
        async (chunk) => {
          if (res.destroyed) throw gone;
          res.write(chunk);
          await drained(res);
        },
        timestamping(deps.config, true),
      ),
    );
    res.end();
    // The bundle says it has no timestamp; the operator learns why.
    if (exported.timestampFailure)
      log.warn('evidence bundle exported without a timestamp', {
        authority: deps.config.TIMESTAMP_AUTHORITY_URL,
        why: exported.timestampFailure,
      });
  } catch (error) {
    // Once the ZIP has begun no error envelope can follow: a cut answer fails its check, and is logged.
    if (error !== gone) throw error;
    res.destroy();
  }
  return handled;
}

/**
 * What an assistant reads of a video's bundle without downloading it: the manifest's SHA-256 (the one a
 * download of the same state has), the status history and the metadata and subtitle versions as the
 * bundle holds them (each version naming its kept answer), and the newest kept answers.
 */
export async function describeBundle({ deps }: Pick<ActionContext, 'deps'>, { subject }: EvidenceExport & { subject: { kind: 'video' } }) {
  const { videoId } = subject;
  return deps.sql.begin(snapshot, async (tx) => {
    // The bundle is written and thrown away: its manifest's hash is all that is wanted of it.
    const { manifestSha256 } = await writeBundle(tx, subject, async () => {}, timestamping(deps.config, false));
    const observations = await keptObservations(tx, videoId);
    return {
      manifestSha256,
      history: await statusHistory(tx, videoId),
      metadataVersions: await metadataVersions(tx, videoId),
      subtitleVersions: (await subtitleVersions(tx, videoId)).map(subtitleVersionRecord),
      observations: observations.slice(-DESCRIBED_OBSERVATIONS),
      keptObservations: observations.length,
      unkeptObservations: await unkeptObservationCount(tx, videoId),
    };
  });
}
/** Kept answers a description lists, the newest: a video checked for years has thousands; the bundle holds them all. */
const DESCRIBED_OBSERVATIONS = 50;

/** A video's evidence bundle; counts one subtitleDownloadsPerDay, like a subtitle file. */
export const videoEvidence = defineAction({
  what: 'evidence bundles',
  access: { scope: 'L1', feature: 'statusHistory', charges: ['subtitleDownloadsPerDay'] },
  async run(ctx, videoId: string): Promise<EvidenceExport & { subject: { kind: 'video' } }> {
    const [video] = await ctx.deps.sql`select 1 from videos where video_id = ${videoId}`;
    if (!video) throw notFound(`no video ${videoId} is kept in the archive; search for its channel to find it`);
    await ctx.charge('subtitleDownloadsPerDay');
    return { subject: { kind: 'video', videoId }, fileName: `${videoId}.evidence.zip` };
  },
});

/** A watchlist's evidence bundle, its owner's alone (anybody else: 404); counts one subtitleDownloadsPerDay per video in it. */
export const watchlistEvidence = defineAction({
  what: 'evidence bundles',
  access: { scope: 'L1', feature: 'watchlists', charges: ['subtitleDownloadsPerDay'] },
  async run(ctx, id: string): Promise<EvidenceExport> {
    const watchlist = await findOwnWatchlist(ctx.deps.sql, watchlistOwner(ctx.caller), id);
    if (!watchlist) throw notFound(`no watchlist ${id} of yours; GET /api/watchlists lists them`);
    const videoIds = await watchlistVideoIds(ctx.deps.sql, watchlist.id);
    await ctx.charge('subtitleDownloadsPerDay', Math.max(videoIds.length, 1));
    return {
      subject: { kind: 'watchlist', id: watchlist.id, name: watchlist.name, videoIds },
      fileName: `watchlist-${watchlist.id}.evidence.zip`,
    };
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

/** A video's metadata and subtitle versions, each naming the kept answer behind it: the bundle's records, as JSON. */
export const readVersions = defineAction({
  what: 'status history',
  access: { scope: 'L1', feature: 'statusHistory' },
  async run({ deps }, videoId: string) {
    const metadata = await metadataVersions(deps.sql, videoId);
    if (!metadata.current) throw notFound(`no video ${videoId} is stored; a channel search finds a channel's videos`);
    return { videoId, metadata, subtitles: (await subtitleVersions(deps.sql, videoId)).map(subtitleVersionRecord) };
  },
});

/** The check of an uploaded bundle, in memory: nothing of it is written anywhere. */
export const verifyEvidence = defineAction({
  what: 'checking evidence bundles',
  access: {},
  run: async (_ctx, bundle: Uint8Array): Promise<Verdict> => verifyBundle(bufferBytes(bundle)),
});
