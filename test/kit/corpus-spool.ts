/**
 * A corpus generated once into a file, a JSON line per batch, so that building an engine from it measures
 * the engine and not the generator (which costs about 40 µs a video, on the same cores as the database).
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { VideoRow } from './corpus.ts';

export async function spoolCorpus<Row = VideoRow>(
  batches: AsyncIterable<Row[]>,
  file: string,
): Promise<{ seconds: number; bytes: number }> {
  const started = performance.now();
  const out = createWriteStream(file);
  for await (const rows of batches) {
    if (!out.write(`${JSON.stringify(rows)}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'close');
  return { seconds: (performance.now() - started) / 1000, bytes: (await stat(file)).size };
}

/** The batches of a spooled corpus (videos, or any rows: the transcripts of the fts benchmark), in the order they were written. */
export async function* readSpool<Row = VideoRow>(file: string): AsyncGenerator<Row[]> {
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) yield JSON.parse(line) as Row[];
}
