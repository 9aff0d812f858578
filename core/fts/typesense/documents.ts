import type { CollectionCreateSchema, ImportResponse } from 'typesense';
import type { Queryable } from '../../db/database.ts';
import { tokenize } from '../query.ts';
import { call, literal, type TypesenseTarget } from './client.ts';

/**
 * A video as a Typesense document: text already folded and split by tokenize() (so case, accents and
 * CJK characters behave exactly as on Postgres), the filters and the sort keys.
 */

/**
 * Missing sort values: each of date and duration has one field per direction, holding the value or a
 * sentinel that sorts after every real value in that direction (the lowest for descending, the highest
 * for ascending), so videos without one come last both ways, as on Postgres. Views sort descending only.
 */
const SORTS_LAST_DESC = -Number.MAX_SAFE_INTEGER;
const SORTS_LAST_ASC = Number.MAX_SAFE_INTEGER;

export type VideoDocument = {
  id: string;
  /** The id again, as a sortable field: Typesense cannot sort on `id`. */
  video_id: string;
  title: string;
  tags: string;
  description: string;
  /** Every distinct token of title, tags and description: OR groups and exclusions filter on it. */
  tokens: string[];
  /** Every distinct pair of adjacent tokens (adjacentPairs): phrases filter on it. */
  pairs: string[];
  status: 'live' | 'deleted' | 'checking';
  has_video: boolean;
  has_subtitles: boolean;
  has_summary: boolean;
  channel_id: string;
  language?: string;
  date_desc: number;
  date_asc: number;
  duration_desc: number;
  duration_asc: number;
  view_count: number;
};

/**
 * Adjacent tokens joined into one token. The document's pairs run through title, tags and description
 * in that order, across their boundaries, as Postgres's concatenated tsvector does
 * (sql/009_full_text_search.sql), so that a phrase is present where all its pairs are: exactly so for
 * two tokens (see translate.ts). The joint is an indexed symbol, so Typesense keeps a pair one token
 * (one posting list to read); tokenize() never yields it, so no pair is mistaken for a word.
 */
const PAIR_JOINT = '_';
export const adjacentPairs = (tokens: string[]) => tokens.slice(1).map((token, index) => `${tokens[index]}${PAIR_JOINT}${token}`);

/**
 * The collection's fields. A change here needs `afterimage reindex` (reindex.ts) to build a collection
 * with it behind the alias: documents already indexed lack the new values. Until then index_videos keeps
 * upserting (Typesense stores fields its schema lacks without indexing them), and searches that filter
 * on a missing field answer 503 saying to reindex (client.ts).
 */
export function collectionSchema(name: string): CollectionCreateSchema {
  const int64 = (field: string) => ({ name: field, type: 'int64' as const });
  return {
    name,
    symbols_to_index: [PAIR_JOINT],
    fields: [
      { name: 'video_id', type: 'string', sort: true },
      { name: 'title', type: 'string' },
      { name: 'tags', type: 'string' },
      { name: 'description', type: 'string' },
      { name: 'tokens', type: 'string[]' },
      { name: 'pairs', type: 'string[]' },
      { name: 'status', type: 'string', facet: true },
      { name: 'has_video', type: 'bool' },
      { name: 'has_subtitles', type: 'bool' },
      { name: 'has_summary', type: 'bool' },
      { name: 'channel_id', type: 'string', facet: true },
      { name: 'language', type: 'string', facet: true, optional: true },
      int64('date_desc'),
      int64('date_asc'),
      int64('duration_desc'),
      int64('duration_asc'),
      int64('view_count'),
    ],
  };
}

interface DocumentRow {
  id: string;
  title: string | null;
  tags: string[];
  description: string | null;
  status: VideoDocument['status'];
  hasVideo: boolean;
  hasSubtitles: boolean;
  hasSummary: boolean;
  channelId: string;
  language: string | null;
  uploadDay: number | null;
  duration: number | null;
  views: number | null;
}

// Re-uploaded counts as deleted (gone from its first address), as status=deleted promises.
const DOCUMENT_COLUMNS = `video_id as id, title, tags, description,
  case when status = 're-uploaded' then 'deleted' else status end as status,
  has_video as "hasVideo", has_subtitles as "hasSubtitles", has_summary as "hasSummary",
  channel_id as "channelId", language, upload_date - date '1970-01-01' as "uploadDay", duration_seconds as duration,
  view_count::float8 as views`;

function toDocument(row: DocumentRow): VideoDocument {
  const title = tokenize(row.title ?? '');
  const tags = tokenize(row.tags.join(' '));
  const description = tokenize(row.description ?? '');
  const all = [...title, ...tags, ...description];
  return {
    id: row.id,
    video_id: row.id,
    title: title.join(' '),
    tags: tags.join(' '),
    description: description.join(' '),
    tokens: [...new Set(all)],
    pairs: [...new Set(adjacentPairs(all))],
    status: row.status,
    has_video: row.hasVideo,
    has_subtitles: row.hasSubtitles,
    has_summary: row.hasSummary,
    channel_id: row.channelId,
    ...(row.language ? { language: row.language } : {}),
    date_desc: row.uploadDay ?? SORTS_LAST_DESC,
    date_asc: row.uploadDay ?? SORTS_LAST_ASC,
    duration_desc: row.duration ?? SORTS_LAST_DESC,
    duration_asc: row.duration ?? SORTS_LAST_ASC,
    view_count: row.views ?? -1,
  };
}

/** The documents of these videos as they are stored now; ids of videos that are gone have none. */
export async function toDocuments(sql: Queryable, videoIds: string[]): Promise<VideoDocument[]> {
  const rows = await sql<
    DocumentRow[]
  >`select ${sql.unsafe(DOCUMENT_COLUMNS)} from videos where video_id = any(${videoIds}) order by video_id`;
  return rows.map(toDocument);
}

/** The next page of documents in video id order, after `afterId` (keyset paging for a full reindex). */
export async function documentsAfter(sql: Queryable, afterId: string, limit: number): Promise<VideoDocument[]> {
  const rows = await sql<
    DocumentRow[]
  >`select ${sql.unsafe(DOCUMENT_COLUMNS)} from videos where video_id > ${afterId} order by video_id limit ${limit}`;
  return rows.map(toDocument);
}

export interface ImportFailure {
  id: string;
  error: string;
}

/** Upserts documents in one import request; what Typesense refused comes back with its reason. */
export async function upsertDocuments(
  target: TypesenseTarget,
  documents: VideoDocument[],
  collection = target.alias,
): Promise<ImportFailure[]> {
  if (documents.length === 0) return [];
  const results: ImportResponse[] = await call(target, `import ${documents.length} documents into "${collection}"`, () =>
    target.client.collections<VideoDocument>(collection).documents().import(documents, { action: 'upsert', throwOnFail: false }),
  );
  // One result line per document, in order.
  return results.flatMap((result, index) => (result.success ? [] : [{ id: documents[index]!.id, error: result.error }]));
}

const DELETE_CHUNK = 100;

/** Deletes the documents of these ids (ids without one are fine), by filter, a chunk of ids per request. */
export async function deleteDocuments(target: TypesenseTarget, videoIds: string[], collection = target.alias): Promise<void> {
  for (let start = 0; start < videoIds.length; start += DELETE_CHUNK) {
    const chunk = videoIds.slice(start, start + DELETE_CHUNK);
    await call(target, `delete ${chunk.length} documents from "${collection}"`, () =>
      target.client
        .collections(collection)
        .documents()
        .delete({ filter_by: `id:[${chunk.map(literal).join(',')}]` }),
    );
  }
}
