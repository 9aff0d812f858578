import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSpool, spoolCorpus } from './corpus-spool.ts';
import { generatedBatches } from './corpus-write.ts';
import { createCorpus, type VideoRow } from './corpus.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'afterimage-spool-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

const collect = async (batches: AsyncIterable<VideoRow[]>) => {
  const all: VideoRow[][] = [];
  for await (const rows of batches) all.push(rows);
  return all;
};

describe('a spooled corpus', () => {
  it('reads back the very batches that were generated, in order', async () => {
    const corpus = createCorpus({ seed: 3, videos: 2_500, channels: 10, vocabularyDir: null });
    const file = join(dir, 'corpus.jsonl');
    const spooled = await spoolCorpus(generatedBatches(corpus, { batch: 1_000 }), file);
    expect(spooled.bytes).toBeGreaterThan(0);
    const read = await collect(readSpool(file));
    expect(read.map((rows) => rows.length)).toEqual([1_000, 1_000, 500]);
    expect(read).toEqual(await collect(generatedBatches(corpus, { batch: 1_000 })));
  });

  it('reads a batch only when it is taken, so a spool larger than the heap can be read', async () => {
    const file = join(dir, 'large.jsonl');
    const line = JSON.stringify([{ text: 'x'.repeat(2 ** 21) }]);
    await writeFile(file, `${line}\n`.repeat(24));
    const batches = readSpool<{ text: string }>(file);
    const before = process.memoryUsage();
    await batches.next();
    // Time for a reader that reads ahead to take in the rest of the 48 MiB, more than the bound below.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const after = process.memoryUsage();
    expect(after.heapUsed + after.external - before.heapUsed - before.external).toBeLessThan(32 * 2 ** 20);
    let count = 1;
    for await (const rows of batches) count += rows.length;
    expect(count).toBe(24);
  });

  it('reads lines split anywhere across chunks, characters of several bytes included', async () => {
    const file = join(dir, 'split.jsonl');
    const rows = Array.from({ length: 5 }, (_, n) => [{ text: `${'ж'.repeat(300_000 + n)}語${n}` }]);
    await writeFile(file, `${rows.map((batch) => JSON.stringify(batch)).join('\n')}\n`);
    const read: Array<Array<{ text: string }>> = [];
    for await (const batch of readSpool<{ text: string }>(file)) read.push(batch);
    expect(read).toEqual(rows);
  });
});
