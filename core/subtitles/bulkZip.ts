import type { Queryable } from '../db/database.ts';
import { countVideo, cuesInBatches, matchList, matchesOf, startTotals, videoFields, type BulkPlan, type Planned } from './bulk.ts';
import type { OutputFormat } from './cue.ts';
import { render } from './render.ts';
import { describeTrack } from './tracks.ts';

export interface BulkZipOptions {
  fileFormat: OutputFormat;
  query?: string | undefined;
}

/** The zip entry of one video's file: <videoId>.<language>.<fileFormat>. */
const zipEntryName = (entry: Planned, fileFormat: OutputFormat) => `${entry.video.videoId}.${entry.track.language}.${fileFormat}`;

/**
 * The bulk answer as a zip, in pieces as it is deflated: one file per video (its cues read a page of
 * videos at a time), then manifest.json with what each file holds, what is missing and the totals.
 * Stopping early (return() on the generator) ends the zip without its central directory.
 */
export async function* bulkZip(sql: Queryable, plan: BulkPlan, options: BulkZipOptions): AsyncGenerator<Uint8Array> {
  const { fileFormat, query } = options;
  // fflate is loaded with the first zip asked for, not with every process.
  const { Zip, ZipDeflate } = await import('fflate');
  const ready: Uint8Array[] = [];
  let failure: Error | undefined;
  // Deflates synchronously: every chunk of a file is ready once it has been pushed.
  const zip = new Zip((error, chunk) => {
    if (error) failure = error;
    else ready.push(chunk);
  });
  const addFile = (name: string, text: string) => {
    const file = new ZipDeflate(name, { level: 6 });
    zip.add(file);
    file.push(Buffer.from(text, 'utf8'), true);
  };
  const takeReady = () => {
    if (failure) throw failure;
    return ready.splice(0);
  };
  let ended = false;
  try {
    const manifest: Array<Record<string, unknown>> = [];
    const totals = startTotals(plan);
    for await (const { entry, cues } of cuesInBatches(sql, plan.planned)) {
      const matched = matchesOf(cues, query);
      const file = zipEntryName(entry, fileFormat);
      addFile(file, render(cues, fileFormat));
      countVideo(totals, entry, cues, matched);
      manifest.push({ ...videoFields(entry.video), file, track: describeTrack(entry.track), ...matchList(cues, matched, query) });
      yield* takeReady();
    }
    addFile(
      'manifest.json',
      `${JSON.stringify({ format: 'zip', fileFormat, query: query ?? null, videos: manifest, missing: plan.missing, totals }, null, 2)}\n`,
    );
    zip.end();
    ended = true;
    yield* takeReady();
  } finally {
    if (!ended) zip.terminate();
  }
}
