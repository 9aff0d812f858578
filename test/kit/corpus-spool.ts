/**
 * A corpus generated once into a file, a JSON line per batch, so that building an engine from it measures
 * the engine and not the generator (which costs about 40 µs a video, on the same cores as the database).
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { once } from 'node:events';
import type { VideoRow } from './corpus.ts';

const SPOOL_CHUNK_BYTES = 1 << 20;

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

/**
 * The batches of a spooled corpus (videos, or any rows: the transcripts of the fts benchmark), in the order
 * they were written, read as they are taken: at most one chunk ahead. readline's iterator reads up to 1,024
 * lines ahead of its reader, and 100,000 transcripts spool 5.6 GB in lines of 12 MB: the heap ran out.
 */
export async function* readSpool<Row = VideoRow>(file: string): AsyncGenerator<Row[]> {
  let line: string[] = [];
  for await (const chunk of createReadStream(file, { encoding: 'utf8', highWaterMark: SPOOL_CHUNK_BYTES }) as AsyncIterable<string>) {
    let start = 0;
    for (let end = chunk.indexOf('\n'); end !== -1; start = end + 1, end = chunk.indexOf('\n', start)) {
      line.push(chunk.slice(start, end));
      yield JSON.parse(line.join('')) as Row[];
      line = [];
    }
    line.push(chunk.slice(start));
  }
  const last = line.join('');
  if (last !== '') yield JSON.parse(last) as Row[];
}
