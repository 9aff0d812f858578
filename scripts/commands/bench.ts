import { frequencyCounter, wordsBetween } from '../../test/kit/corpus-queries.ts';
import { writeCorpus } from '../../test/kit/corpus-write.ts';
import { createCorpus } from '../../test/kit/corpus.ts';
import { output, parseOptions, subcommand, UsageError } from '../cli.ts';
import { DATABASE_CHOICE, dataDirOption, withChosenDatabase } from '../serviceDatabase.ts';
import { progressBar } from '../progress.ts';

const USAGE = `usage: npx afterimage bench generate --videos N [--seed S] [--channels M] [--data-dir DIR] [--json]
writes a synthetic seeded corpus (for benchmarks) into the database. ${DATABASE_CHOICE}`;

const whole = (value: string | undefined, flag: string, min: number, fallback?: number): number => {
  if (value === undefined && fallback !== undefined) return fallback;
  if (value === undefined || !/^\d+$/.test(value) || Number(value) < min || Number(value) > 2 ** 31 - 1) {
    throw new UsageError(
      `${flag} takes a whole number of at least ${min} (got ${value === undefined ? 'nothing' : JSON.stringify(value)})\n${USAGE}`,
    );
  }
  return Number(value);
};

/**
 * `afterimage bench generate`: writes a synthetic, seeded corpus of channels and videos (test/kit/corpus.ts)
 * into the service's database, through every index, and reports how fast. A seed's videos are written once.
 */
export async function benchCommand(command: string[]): Promise<void> {
  const [, args] = subcommand(command, ['generate'], USAGE);
  const { values } = parseOptions(
    args,
    { videos: { type: 'string' }, seed: { type: 'string' }, channels: { type: 'string' }, ...dataDirOption },
    { usage: USAGE },
  );
  const videos = whole(values.videos, '--videos', 1);
  const seed = whole(values.seed, '--seed', 0, 1);
  const channels = values.channels === undefined ? undefined : whole(values.channels, '--channels', 1);

  const corpus = createCorpus({ seed, videos, ...(channels ? { channels } : {}) });
  const counter = frequencyCounter(corpus);
  const summary = await withChosenDatabase(values['data-dir'], async (db) => {
    const bar = progressBar('generating');
    const started = performance.now();
    const result = await writeCorpus(db.sql, corpus, {
      counter,
      onProgress: (done, total) => bar.update(done, total, `${Math.round(done / ((performance.now() - started) / 1000))} videos/s`),
    });
    bar.done(`${result.videos} videos, ${result.channels} channels`);
    return result;
  });
  const table = counter.table();
  const common = wordsBetween(table, Math.ceil(videos * 0.3), videos).slice(0, 5);
  const report = {
    seed,
    videos: summary.videos,
    channels: summary.channels,
    vocabulary: corpus.vocabulary.source,
    vocabularyFiles: corpus.vocabulary.files,
    languages: summary.languages,
    statuses: summary.statuses,
    seconds: Math.round(summary.seconds * 100) / 100,
    videosPerSecond: Math.round(summary.videosPerSecond),
    commonWords: common.map((w) => ({ word: w.word, videos: w.videos })),
  };
  output(values.json, report, () =>
    [
      `generated ${report.videos} videos in ${report.channels} channels (seed ${seed}) in ${report.seconds} s: ${report.videosPerSecond} videos/s`,
      `  words:     ${report.vocabulary === 'built-in' ? 'the built-in word list (no trending datasets found)' : `trending datasets (${report.vocabularyFiles.join(', ')})`}`,
      `  languages: ${Object.entries(report.languages)
        .map(([language, n]) => `${language} ${n}`)
        .join(', ')}`,
      `  statuses:  ${Object.entries(report.statuses)
        .map(([status, n]) => `${status} ${n}`)
        .join(', ')}`,
      `  in ≥ 30 % of videos: ${report.commonWords.map((w) => `${w.word} (${w.videos})`).join(', ') || 'none'}`,
    ].join('\n'),
  );
}
