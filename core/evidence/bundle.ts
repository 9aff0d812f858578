/**
 * Evidence bundles (format afterimage-evidence/1): a video's or a watchlist's record as a ZIP anyone can
 * check offline. Every file is listed in manifest.json with its size, SHA-256 and how it was obtained;
 * README.txt's first line is the manifest's SHA-256. The same state exports byte-identical ZIPs: the
 * entries come in a fixed order with a fixed time, and nothing in them is the time of the export.
 * Written piece by piece to a sink that applies backpressure, kept observations read a page at a time.
 */
import type { Queryable } from '../db/database.ts';
import { sha256Hex } from '../status/keepObservations.ts';
import { statusHistory } from '../status/statusHistory.ts';
import { renderVtt } from '../subtitles/renderVtt.ts';
import type { Cue } from '../subtitles/cue.ts';
import { findSummary } from '../summaries/findSummary.ts';
import { toSummaryObject } from '../summaries/summaryObject.ts';
import { loadVideos } from '../videos/loadVideos.ts';
import { storedZip } from './storedZip.ts';
import { OBSERVATION_COLUMNS, type ObservationRecord } from './observations.ts';
import { TIMESTAMP_TOKEN, type Attestation, type Timestamp } from './timestamp.ts';
import { metadataVersions, subtitleVersionRecord, subtitleVersions } from './versions.ts';

export const EVIDENCE_FORMAT = 'afterimage-evidence/1';
export const MANIFEST = 'manifest.json';
export const README = 'README.txt';
// One text for every observation's files (the record says the rest): thousands of entries share it.
const OBTAINED_RECORD = "the record of one kept answer of a source: what it decided, when, the request, the body's SHA-256 and size";
const OBTAINED_BODY = 'the raw body of that answer as the source sent it, gzip-compressed as kept';
/** Kept observations read per page. */
const OBSERVATION_PAGE = 50;

interface ManifestFile {
  path: string;
  size: number;
  sha256: string;
  obtained: string;
}

export type BundleSubject = { kind: 'video'; videoId: string } | { kind: 'watchlist'; id: string; name: string; videoIds: string[] };

export interface Manifest {
  format: typeof EVIDENCE_FORMAT;
  subject: BundleSubject;
  files: ManifestFile[];
  /** The RFC 3161 authority asked to timestamp the manifest (TIMESTAMP_AUTHORITY_URL, its origin and path); absent when none was. */
  timestampAuthority?: string;
}

/**
 * Timestamping an export: the authority is named in the manifest (so the manifest, and its hash, are the
 * same whatever it answers), and `request` asks it for a token; without `request` none is asked for.
 */
export interface Timestamping {
  authority: string;
  request?: (manifest: Uint8Array) => Promise<Timestamp>;
}

/**
 * What the README says of the timestamp: nothing when no authority was asked, else what it attested and
 * the token's SHA-256 (a byte of the token changed where its signature does not reach, in a certificate
 * say, still shows), or that it gave none.
 */
export type TimestampNote = (Attestation & { tokenSha256: string }) | 'unavailable' | undefined;

/** How an export went: the manifest's SHA-256, and why the authority gave no token when it did not. */
export interface Exported {
  manifestSha256: string;
  timestampFailure?: string;
}

/** The README of a bundle whose manifest has this SHA-256, and what it says of the timestamp: the verifier expects exactly this text. */
export const readmeText = (manifestSha256: string, timestamp?: TimestampNote) => `${manifestSha256}
This is an Afterimage evidence bundle, format ${EVIDENCE_FORMAT}.
The line above is the SHA-256 of manifest.json. To check the bundle without Afterimage:
1. Unzip it and run "sha256sum manifest.json": it must print the line above.
2. manifest.json lists every other file with its size in bytes, its SHA-256 and how it was obtained.
   Each file's SHA-256 must match, and no file may be missing or added (this README and the manifest aside).
3. Each observations/<id>.body.gz is the raw answer a source gave, gzip-compressed: "gunzip -c" it and its
   SHA-256 and size must be the bodySha256 and bodySize of observations/<id>.json beside it.
4. In status-history.json each entry's previousStatus is the status of the entry before it.
5. Each observation that metadata-versions.json and subtitle-versions.json name (the answer behind a version)
   is a file of the bundle, beside them.
Or run "afterimage evidence verify <bundle.zip>", or upload the bundle at /evidence/verify on an Afterimage server.
${timestampText(timestamp)}`;

function timestampText(timestamp: TimestampNote): string {
  if (timestamp === undefined) return '';
  if (timestamp === 'unavailable')
    return `
No timestamp: the time-stamping authority manifest.json names (timestampAuthority) gave none when the bundle was exported.
`;
  return `
${TIMESTAMP_TOKEN} (SHA-256 ${timestamp.tokenSha256}) is an RFC 3161 time-stamp token over the SHA-256 of manifest.json, signed by ${timestamp.signer}:
it attests that the manifest, and so every file it lists, existed at ${timestamp.attestedAt.toISOString()}. Check it with
"openssl ts -verify -in ${TIMESTAMP_TOKEN} -data manifest.json -CAfile <that authority's certificate>".
`;
}

const jsonText = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

type Sink = (chunk: Uint8Array) => Promise<void>;

/** The ZIP being written (storedZip.ts): each file goes out as soon as it is added; the manifest is the list kept. */
function bundleWriter(sink: Sink) {
  const zip = storedZip(sink);
  const files: ManifestFile[] = [];
  const add = async (path: string, bytes: Uint8Array, obtained: string | undefined) => {
    if (obtained !== undefined) files.push({ path, size: bytes.length, sha256: sha256Hex(bytes), obtained });
    await zip.add(path, bytes);
  };
  return {
    addText: (path: string, text: string, obtained: string) => add(path, Buffer.from(text, 'utf8'), obtained),
    addBytes: (path: string, bytes: Uint8Array, obtained: string) => add(path, bytes, obtained),
    /** manifest.json, README.txt, the timestamp token when one was given, and the central directory. */
    async finish(subject: BundleSubject, timestamping: Timestamping | undefined): Promise<Exported> {
      const manifest = Buffer.from(
        jsonText({
          format: EVIDENCE_FORMAT,
          subject,
          files,
          ...(timestamping ? { timestampAuthority: timestamping.authority } : {}),
        } satisfies Manifest),
        'utf8',
      );
      const manifestSha256 = sha256Hex(manifest);
      // The token is outside the manifest: a new one each export, the manifest (and its hash) the same.
      const stamped = timestamping?.request
        ? await timestamping.request(manifest).catch((error: Error) => ({ failure: error.message }))
        : undefined;
      const note: TimestampNote = timestamping
        ? stamped && 'token' in stamped
          ? { ...stamped, tokenSha256: sha256Hex(stamped.token) }
          : 'unavailable'
        : undefined;
      await add(MANIFEST, manifest, undefined);
      await add(README, Buffer.from(readmeText(manifestSha256, note), 'utf8'), undefined);
      if (stamped && 'token' in stamped) await add(TIMESTAMP_TOKEN, stamped.token, undefined);
      await zip.end();
      return { manifestSha256, ...(stamped && 'failure' in stamped ? { timestampFailure: stamped.failure } : {}) };
    },
  };
}
type BundleWriter = ReturnType<typeof bundleWriter>;

/** One video's files, under `prefix` ('' for a video's bundle, videos/<id>/ in a watchlist's). */
async function addVideo(sql: Queryable, writer: BundleWriter, videoId: string, prefix: string): Promise<void> {
  const [video] = await loadVideos(sql, [videoId]);
  await writer.addText(`${prefix}video.json`, jsonText(video), `the video as GET /api/videos/${videoId} answers it`);
  await writer.addText(
    `${prefix}status-history.json`,
    jsonText(await statusHistory(sql, videoId)),
    `the current status and every change, as GET /api/videos/${videoId}/status-history answers it`,
  );
  await writer.addText(
    `${prefix}metadata-versions.json`,
    jsonText(await metadataVersions(sql, videoId)),
    'the title, description, tags and thumbnail each had until a source that saw the video as well as before saw them change, each naming the kept answer that showed the change (observation); current: what they are now',
  );
  const subtitles = await subtitleVersions(sql, videoId);
  for (const { file, track, observation } of subtitles) {
    const [row] = await sql<Array<{ cues: Cue[] }>>`select cues from subtitle_tracks where id = ${track.id}::bigint`;
    const from = observation ?? (track.originUrl?.startsWith('file:') ? 'the yt-dlp archive' : (track.originUrl ?? 'no URL'));
    await writer.addText(
      `${prefix}${file}`,
      renderVtt(row?.cues ?? []),
      `version ${track.version} of the ${track.kind} ${track.language} subtitles, first found in the ${track.source} source (${from}) at ${track.fetchedAt.toISOString()}, as WebVTT of the stored cues (content hash ${track.contentHash})`,
    );
  }
  await writer.addText(
    `${prefix}subtitle-versions.json`,
    jsonText(subtitles.map(subtitleVersionRecord)),
    'every subtitle version: its file under subtitles/, where it was first found and the kept answer its cues were read from (observation)',
  );
  const summary = await findSummary(sql, videoId, { userId: null });
  if (summary?.status === 'generated') {
    await writer.addText(
      `${prefix}summary.json`,
      jsonText(toSummaryObject(summary)),
      `the public AI summary, as GET /api/summary/${videoId} answers it (made by ${summary.llm_model}, not a source's answer)`,
    );
  }
  const pages = sql<Array<ObservationRecord & { body: Buffer }>>`
    select ${sql.unsafe(OBSERVATION_COLUMNS)}, e.body_gzip as body
    from evidence_observations e where e.video_id = ${videoId} order by e.id`.cursor(OBSERVATION_PAGE);
  for await (const rows of pages) {
    for (const { body, ...record } of rows) {
      const base = `${prefix}observations/${record.id}`;
      await writer.addText(`${base}.json`, jsonText(record), OBTAINED_RECORD);
      await writer.addBytes(`${base}.body.gz`, body, OBTAINED_BODY);
    }
  }
}

/** Writes the bundle of `subject` to `sink`. Run it in one read-only transaction: one state. */
export async function writeBundle(sql: Queryable, subject: BundleSubject, sink: Sink, timestamping?: Timestamping): Promise<Exported> {
  const writer = bundleWriter(sink);
  if (subject.kind === 'video') await addVideo(sql, writer, subject.videoId, '');
  else for (const videoId of subject.videoIds) await addVideo(sql, writer, videoId, `videos/${videoId}/`);
  return writer.finish(subject, timestamping);
}

/**
 * The videos a watchlist's bundle holds: those it watches by id, and the watched channels' videos
 * whose status ever changed or that have kept evidence (the rest of a channel is its listing, not evidence).
 */
export async function watchlistVideoIds(sql: Queryable, watchlistId: string): Promise<string[]> {
  const rows = await sql<Array<{ videoId: string }>>`
    select video_id as "videoId" from watchlist_items where watchlist_id = ${watchlistId}::uuid and video_id is not null
    union
    select v.video_id from videos v join watchlist_items i on i.channel_id = v.channel_id and i.watchlist_id = ${watchlistId}::uuid
    where exists (select 1 from evidence_observations e where e.video_id = v.video_id)
      or exists (select 1 from video_status_history h where h.video_id = v.video_id and h.previous_status is not null)
    order by 1`;
  return rows.map((row) => row.videoId);
}
