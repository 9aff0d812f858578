import type { Sql } from '../../core/db/database.ts';
import { channelIdFor, videoIdFor } from '../support/subtitles.ts';

/** A small archive whose every video exists to prove one rule of the search; both backends index it. */
export interface CorpusVideo {
  label: string;
  title: string;
  description?: string;
  tags?: string[];
  status?: 'live' | 'deleted' | 're-uploaded' | 'checking';
  hasVideo?: boolean;
  hasSubtitles?: boolean;
  hasSummary?: boolean;
  uploadDate?: string | null;
  duration?: number | null;
  views?: number | null;
}

export const corpus: CorpusVideo[] = [
  {
    label: 'lathe-title',
    title: 'Restoring an old lathe',
    description: 'A workshop video.',
    uploadDate: '2019-05-01',
    duration: 600,
    views: 5_000,
  },
  {
    label: 'lathe-desc',
    title: 'Workshop tour',
    description: 'At the end we switch on the lathe once more.',
    uploadDate: '2020-01-01',
    duration: 300,
    views: 90_000,
  },
  {
    label: 'lathe-tag',
    title: 'Machines of the workshop',
    tags: ['lathe', 'milling'],
    uploadDate: '2018-03-03',
    duration: 1200,
    views: 10,
  },
  {
    label: 'bridge-phrase',
    title: 'The bridge collapsed into the river',
    description: 'News footage.',
    uploadDate: '2021-07-07',
    duration: 95,
    views: 300,
    status: 'deleted',
    hasSubtitles: true,
  },
  {
    label: 'bridge-apart',
    title: 'River walk to the old bridge',
    description: 'The river was calm.',
    uploadDate: '2021-07-08',
    duration: 2000,
    views: 301,
  },
  {
    label: 'cafe-accent',
    title: 'Un café à Paris',
    description: 'Le meilleur café de la ville.',
    uploadDate: '2016-02-02',
    duration: 420,
    views: 7_000,
    hasVideo: true,
  },
  {
    label: 'cafe-plain',
    title: 'CAFE RACER build',
    description: 'Motorcycle build, part one.',
    uploadDate: '2017-09-09',
    duration: 3600,
    views: 70_000,
    hasSummary: true,
  },
  {
    label: 'russian',
    title: 'Привет, МИР: обзор',
    description: 'Русский язык и ЁЖИК.',
    uploadDate: '2022-12-12',
    duration: 61,
    views: 1_200,
    hasSubtitles: true,
  },
  { label: 'japanese', title: '東京タワーの夜景', description: '夜の東京を歩く', uploadDate: '2015-04-04', duration: 180, views: 44 },
  {
    label: 'chinese',
    title: '北京烤鸭的做法',
    description: '在家做烤鸭',
    uploadDate: null,
    duration: null,
    views: null,
    status: 'checking',
  },
  { label: 'or-cats', title: 'Cats sleeping', uploadDate: '2014-01-01', duration: 30, views: 50, status: 're-uploaded' },
  { label: 'or-dogs', title: 'Dogs playing', uploadDate: '2014-01-02', duration: 31, views: 50 },
  {
    label: 'or-both',
    title: 'Cats and dogs together',
    uploadDate: '2014-01-03',
    duration: 32,
    views: 50,
    hasVideo: true,
    hasSubtitles: true,
    hasSummary: true,
  },
  {
    label: 'python-tutorial',
    title: 'Python tutorial for beginners',
    description: 'Learn python programming step by step.',
    uploadDate: '2023-03-03',
    duration: 5400,
    views: 2_000_000,
  },
  {
    label: 'python-snake',
    title: 'A python snake in the wild',
    description: 'Not a programming video: an actual snake.',
    uploadDate: '2023-03-04',
    duration: 240,
    views: 800,
  },
  ...Array.from(
    { length: 23 },
    (_, i): CorpusVideo => ({
      label: `page-${i}`,
      title: `Paging sample number ${i}`,
      description: i % 2 === 0 ? 'even' : 'odd',
      uploadDate: i % 5 === 4 ? null : `2010-01-${String((i % 28) + 1).padStart(2, '0')}`,
      duration: i % 7 === 3 ? null : 100 + (i % 4),
      views: i % 3 === 0 ? 1_000 : i,
    }),
  ),
];

export const corpusChannel = channelIdFor('fts-corpus');
export const idOf = (label: string) => videoIdFor(`fts:${label}`);
export const labelOf = new Map(corpus.map((video) => [idOf(video.label), video.label]));

export async function storeCorpus(sql: Sql): Promise<void> {
  await sql`insert into channels (channel_id, title) values (${corpusChannel}, 'Search corpus') on conflict do nothing`;
  const rows = corpus.map((v) => ({
    video_id: idOf(v.label),
    channel_id: corpusChannel,
    title: v.title,
    description: v.description ?? null,
    tags: v.tags ?? [],
    status: v.status ?? 'live',
    status_reason: v.status === 'deleted' || v.status === 're-uploaded' ? 'removed_by_uploader' : null,
    video_file_url: v.hasVideo ? `https://archive.org/download/${v.label}.mp4` : null,
    has_subtitles: v.hasSubtitles ?? false,
    has_summary: v.hasSummary ?? false,
    upload_date: v.uploadDate === undefined ? '2012-06-06' : v.uploadDate,
    duration_seconds: v.duration === undefined ? 100 : v.duration,
    view_count: v.views === undefined ? 100 : v.views,
  }));
  // Re-uploads point at their new id, which must exist first.
  await sql`insert into videos ${sql(rows.map((row) => ({ ...row, status: row.status === 're-uploaded' ? 'deleted' : row.status })))}`;
  await sql`update videos set status = 're-uploaded', reuploaded_as = ${idOf('or-dogs')} where video_id = ${idOf('or-cats')}`;
}
