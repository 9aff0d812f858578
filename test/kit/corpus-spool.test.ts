import { mkdtemp, rm } from 'node:fs/promises';
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
});
