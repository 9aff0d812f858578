import pRetry from 'p-retry';
import { Client } from 'typesense';
import type { CollectionCreateSchema, ImportResponse, SearchParams, SearchResponse } from 'typesense';
import { ConfigError, type Config } from '../config.ts';
import type { Queryable, Sql } from '../db/database.ts';
import { AppError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { FtsFilters, FtsPage, FtsRequest, FtsSort, SearchBackend } from './backend.ts';
import { formatQuery, tokenize, type FtsQuery, type Term } from './query.ts';

/**
 * Full-text search on Typesense. Documents carry text already folded and split by tokenize() (so case,
 * accents and CJK characters behave exactly as on Postgres), the filters and the sort keys; searches go
 * through an alias named TYPESENSE_COLLECTION, which `afterimage reindex` points at a freshly built
 * collection. Every word must match as written: no typos, no prefixes, no dropped words.
 */

/** Where the index lives and how hard to try: the alias searches and updates go through. */
export interface TypesenseTarget {
  client: Client;
  alias: string;
  url: string;
  retries: number;
  minDelayMs: number;
  log: Logger;
}

export interface TargetOptions {
  /** search: short timeout (FTS_TIMEOUT_MS), few quick retries; indexing: long timeout, patient retries. */
  purpose: 'search' | 'indexing';
  retries?: number;
  minDelayMs?: number;
}

/** The configured Typesense, or undefined without TYPESENSE_URL; a URL without a key is a configuration error. */
export function typesenseTarget(config: Config, log: Logger, options: TargetOptions): TypesenseTarget | undefined {
  if (!config.TYPESENSE_URL) return undefined;
  if (!config.TYPESENSE_API_KEY) {
    throw new ConfigError(['TYPESENSE_API_KEY: required when TYPESENSE_URL is set (the admin API key the Typesense server was started with)']);
  }
  const url = config.TYPESENSE_URL.replace(/\/+$/, '');
  const search = options.purpose === 'search';
  const client = new Client({
    nodes: [{ url }],
    apiKey: config.TYPESENSE_API_KEY,
    // Retries are ours (p-retry, below), so that only transient failures are retried.
    numRetries: 0,
    connectionTimeoutSeconds: search ? config.FTS_TIMEOUT_MS / 1000 : 120,
    logLevel: 'silent',
  });
  return {
    client,
    alias: config.TYPESENSE_COLLECTION,
    url,
    retries: options.retries ?? (search ? 2 : 4),
    minDelayMs: options.minDelayMs ?? (search ? 100 : 1_000),
    log,
  };
}

// ---------------------------------------------------------------------------------------------------
// Calls: retried when transient, and failures turned into messages that say what to check.

interface TypesenseFailure { httpStatus?: number; code?: string; message?: string }

const statusOf = (error: unknown) => (error as TypesenseFailure).httpStatus;
const isTransient = (error: unknown) => {
  const status = statusOf(error);
  return status === undefined || status === 429 || status >= 500;
};

function describeFailure(error: unknown, target: TypesenseTarget, what: string): AppError {
  if (error instanceof AppError) return error;
  const status = statusOf(error);
  const at = `Typesense at ${target.url}`;
  const said = String((error as TypesenseFailure).message ?? error).replace(/^Request failed with HTTP code \d+ \| Server said: /, '');
  if (status === undefined) {
    const code = (error as TypesenseFailure).code;
    const reason = code === 'ECONNABORTED' || code === 'ETIMEDOUT' ? 'no answer in time' : (code ?? said);
    return new AppError('SERVICE_UNAVAILABLE', `${at} did not answer (${reason}) to ${what}: check that the Typesense server runs and that TYPESENSE_URL points at it`);
  }
  if (status === 401 || status === 403) return new AppError('SERVICE_UNAVAILABLE', `${at} refused the API key (HTTP ${status}) to ${what}: check TYPESENSE_API_KEY`);
  if (status === 404) {
    return new AppError('SERVICE_UNAVAILABLE', `${at} has no usable collection "${target.alias}" (${said}) to ${what}: run \`afterimage reindex\` to build the search index`);
  }
  if (status === 429 || status >= 500) {
    return new AppError('SERVICE_UNAVAILABLE', `${at} failed (HTTP ${status}: ${said}) to ${what}, also after ${target.retries} retries: check the Typesense server's log, memory and disk`);
  }
  return new AppError('INTERNAL_ERROR', `${at} rejected the request (HTTP ${status}: ${said}) to ${what}`);
}

/** Runs one client call with backoff on transient failures; an HTTP status listed in `expected` gives its value instead. */
async function call<T, U = never>(target: TypesenseTarget, what: string, request: () => Promise<T>, expected: Record<number, () => U> = {}): Promise<T | U> {
  try {
    return await pRetry(request, {
      retries: target.retries,
      minTimeout: target.minDelayMs,
      factor: 2,
      randomize: true,
      shouldRetry: ({ error }) => isTransient(error),
      onFailedAttempt: ({ error, attemptNumber, retriesLeft }) => {
        if (isTransient(error) && retriesLeft > 0) target.log.warn('Typesense request failed, retrying', { what, attempt: attemptNumber, err: error });
      },
    });
  } catch (error) {
    const status = statusOf(error);
    if (status !== undefined && expected[status]) return expected[status]();
    throw describeFailure(error, target, what);
  }
}

// ---------------------------------------------------------------------------------------------------
// Documents.

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

export function collectionSchema(name: string): CollectionCreateSchema {
  const int64 = (field: string) => ({ name: field, type: 'int64' as const });
  return {
    name,
    fields: [
      { name: 'video_id', type: 'string', sort: true },
      { name: 'title', type: 'string' },
      { name: 'tags', type: 'string' },
      { name: 'description', type: 'string' },
      { name: 'tokens', type: 'string[]' },
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
  return {
    id: row.id,
    video_id: row.id,
    title: title.join(' '),
    tags: tags.join(' '),
    description: description.join(' '),
    tokens: [...new Set([...title, ...tags, ...description])],
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
  const rows = await sql<DocumentRow[]>`select ${sql.unsafe(DOCUMENT_COLUMNS)} from videos where video_id = any(${videoIds}) order by video_id`;
  return rows.map(toDocument);
}

/** The next page of documents in video id order, after `afterId` (keyset paging for a full reindex). */
export async function documentsAfter(sql: Queryable, afterId: string, limit: number): Promise<VideoDocument[]> {
  const rows = await sql<DocumentRow[]>`select ${sql.unsafe(DOCUMENT_COLUMNS)} from videos where video_id > ${afterId} order by video_id limit ${limit}`;
  return rows.map(toDocument);
}

export interface ImportFailure { id: string; error: string }

/** Upserts documents in one import request; what Typesense refused comes back with its reason. */
export async function upsertDocuments(target: TypesenseTarget, documents: VideoDocument[], collection = target.alias): Promise<ImportFailure[]> {
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
      target.client.collections(collection).documents().delete({ filter_by: `id:[${chunk.map(literal).join(',')}]` }),
    );
  }
}

// ---------------------------------------------------------------------------------------------------
// Keeping the index in sync (sql/010_search_sync.sql).

/** Turns queueing by the videos triggers on or off; true when that changed the setting. */
export async function setSearchSync(sql: Sql, enabled: boolean): Promise<boolean> {
  const changed = await sql`update search_sync set enabled = ${enabled} where enabled <> ${enabled} returning 1`;
  return changed.count > 0;
}

/** True while a reindex fills a new collection: the queue waits for it. */
export async function searchSyncPaused(sql: Queryable): Promise<boolean> {
  const [row] = await sql<{ paused: boolean }[]>`select coalesce(reindexing_until > now(), false) as paused from search_sync`;
  return row?.paused ?? false;
}

const PAUSE = "interval '10 minutes'";
const pauseSync = (sql: Sql) => sql`update search_sync set reindexing_until = now() + ${sql.unsafe(PAUSE)}`;
/** Ends a reindex's pause and wakes the queue, which holds what changed meanwhile. */
async function resumeSync(sql: Sql): Promise<void> {
  await sql`update search_sync set reindexing_until = null`;
  await sql`select queue_index_videos() from search_sync where enabled`;
}

// ---------------------------------------------------------------------------------------------------
// A full reindex into a new collection behind the alias.

export const REINDEX_BATCH = 5_000;

export interface ReindexOptions {
  config: Config;
  sql: Sql;
  log: Logger;
  onProgress?: (done: number, total: number) => void;
  retries?: number;
  minDelayMs?: number;
}

export interface ReindexResult { collection: string; documents: number; seconds: number }

const timestamp = (date: Date) => date.toISOString().replace(/\D/g, '').slice(0, 14);

/**
 * Builds `<alias>_<yyyymmddhhmmss>` from every video, points the alias at it, then drops the collection
 * the alias pointed at before. Searches keep using the old collection until the switch. A failure drops
 * the half-built collection and leaves the alias alone.
 */
export async function reindexAll(options: ReindexOptions): Promise<ReindexResult> {
  const { config, sql, log } = options;
  const target = typesenseTarget(config, log, { purpose: 'indexing', ...pick(options) });
  if (!target) throw new ConfigError(['TYPESENSE_URL: not set; set it (e.g. http://localhost:8108) and TYPESENSE_API_KEY to the server to index into']);
  const started = Date.now();
  const aliases = target.client.aliases();
  const previous = await call(target, `read the alias "${target.alias}"`, () => target.client.aliases(target.alias).retrieve(), { 404: () => undefined });
  await pauseSync(sql);
  let collection: string | undefined;
  try {
    collection = await createCollection(target);
    const [{ total }] = await sql<[{ total: number }]>`select count(*)::int as total from videos`;
    let documents = 0;
    for (let last = ''; ; ) {
      const page = await documentsAfter(sql, last, REINDEX_BATCH);
      if (page.length === 0) break;
      const failures = await upsertDocuments(target, page, collection);
      if (failures.length > 0) {
        const first = failures[0]!;
        throw new AppError('INTERNAL_ERROR', `Typesense refused ${failures.length} of ${page.length} documents (first: ${first.id}: ${first.error}); "${target.alias}" still points at ${previous?.collection_name ?? 'nothing'}: fix the cause and run afterimage reindex again`);
      }
      documents += page.length;
      last = page.at(-1)!.id;
      options.onProgress?.(documents, Math.max(total, documents));
      await pauseSync(sql);
    }
    // Waits for index_videos batches still writing through the alias, so none lands in the new collection late.
    const newCollection = collection;
    await sql.begin(async (tx) => {
      await tx`lock table search_sync_queue in share mode`;
      await call(target, `point the alias "${target.alias}" at "${newCollection}"`, () => aliases.upsert(target.alias, { collection_name: newCollection }));
    });
    if (previous && previous.collection_name !== collection) {
      await call(target, `drop the previous collection "${previous.collection_name}"`, () => target.client.collections(previous.collection_name).delete(), { 404: () => undefined }).catch((error: unknown) =>
        log.warn('the previous collection could not be dropped: drop it by hand', { collection: previous.collection_name, err: error }),
      );
    }
    return { collection, documents, seconds: Math.round((Date.now() - started) / 100) / 10 };
  } catch (error) {
    if (collection) {
      const half = collection;
      await call(target, `drop the unfinished collection "${half}"`, () => target.client.collections(half).delete(), { 404: () => undefined }).catch(() => undefined);
    }
    throw error;
  } finally {
    await resumeSync(sql);
  }
}

const pick = ({ retries, minDelayMs }: { retries?: number; minDelayMs?: number }) => ({
  ...(retries === undefined ? {} : { retries }),
  ...(minDelayMs === undefined ? {} : { minDelayMs }),
});

/** A new collection named after this second; a name taken (a reindex in the same second) waits for the next. */
async function createCollection(target: TypesenseTarget): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const name = `${target.alias}_${timestamp(new Date())}`;
    const taken: Record<number, () => boolean> = attempt < 2 ? { 409: () => false } : {};
    const created = await call(target, `create the collection "${name}"`, () => target.client.collections().create(collectionSchema(name)).then(() => true), taken);
    if (created) return name;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

// ---------------------------------------------------------------------------------------------------
// Searching.

/** Title weighs most, then tags, then the description. */
const QUERY_BY = 'title,tags,description';
const QUERY_BY_WEIGHTS = '3,2,1';
/** Ties: most viewed first, then video id; the id makes the order total, so pages never overlap. */
const TIE_BREAK = 'view_count:desc,video_id:asc';
const SORT_BY: Record<Exclude<FtsSort, 'relevance'>, string> = {
  'date-desc': `date_desc:desc,${TIE_BREAK}`,
  'date-asc': `date_asc:asc,${TIE_BREAK}`,
  'duration-desc': `duration_desc:desc,${TIE_BREAK}`,
  'duration-asc': `duration_asc:asc,${TIE_BREAK}`,
};
export const MAX_PER_PAGE = 250;

/** A filter value: backticks keep any character literal. */
const literal = (value: string) => `\`${value}\``;
const phrase = (term: Term) => (term.tokens.length > 1 ? `"${term.tokens.join(' ')}"` : term.tokens[0]!);

export function filterClauses(filters: FtsFilters): string[] {
  const clauses: string[] = [];
  if (filters.status) clauses.push(`status:=${filters.status}`);
  if (filters.hasVideo !== undefined) clauses.push(`has_video:=${filters.hasVideo}`);
  if (filters.hasSubtitles !== undefined) clauses.push(`has_subtitles:=${filters.hasSubtitles}`);
  if (filters.hasSummary !== undefined) clauses.push(`has_summary:=${filters.hasSummary}`);
  return clauses;
}

/** A group of alternatives as a filter on the tokens field: any word, or all tokens of any phrase. */
function anyOf(group: Term[]): string {
  const words = group.filter((term) => term.tokens.length === 1).map((term) => term.tokens[0]!);
  const phrases = group.filter((term) => term.tokens.length > 1).map((term) => `(${term.tokens.map((token) => `tokens:${literal(token)}`).join(' && ')})`);
  return `(${[...(words.length ? [`tokens:[${words.map(literal).join(',')}]`] : []), ...phrases].join(' || ')})`;
}

/**
 * The query as q and filter_by. q holds the groups of one term (words; phrases in quotes, matched in
 * order within one field) and the excluded phrases (-"…"); Typesense's q has no OR, so groups of
 * alternatives filter on the tokens field instead, exactly for words and, approximately, as "all
 * tokens present" for a phrase among alternatives. Excluded words filter on tokens (exact). A query of
 * only alternatives has q=* (ranked by views, not text), and its excluded phrases drop the videos that
 * hold all their tokens, adjacent or not.
 */
export function queryParameters(query: FtsQuery): { q: string; filters: string[] } {
  const required = query.groups.filter((group) => group.length === 1).map((group) => phrase(group[0]!));
  const filters = query.groups.filter((group) => group.length > 1).map(anyOf);
  const excludedWords = query.excluded.filter((term) => term.tokens.length === 1).map((term) => term.tokens[0]!);
  if (excludedWords.length) filters.push(`tokens:!=[${excludedWords.map(literal).join(',')}]`);
  const excludedPhrases = query.excluded.filter((term) => term.tokens.length > 1);
  if (required.length === 0) {
    for (const term of excludedPhrases) filters.push(`(${term.tokens.map((token) => `tokens:!=${literal(token)}`).join(' || ')})`);
    return { q: '*', filters };
  }
  return { q: [...required, ...excludedPhrases.map((term) => `-${phrase(term)}`)].join(' '), filters };
}

/** num_typos 0, prefix off, no dropped words: a match means every word is there, as on Postgres. */
const EXACT = { num_typos: 0, typo_tokens_threshold: 0, drop_tokens_threshold: 0, prefix: false, split_join_tokens: 'off' } as const;

export function searchParameters(request: FtsRequest): SearchParams<VideoDocument> {
  const { limit, offset } = request;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PER_PAGE) throw new AppError('INVALID_INPUT', `limit must be 1 to ${MAX_PER_PAGE} for Typesense`);
  if (offset % limit !== 0) throw new AppError('INVALID_INPUT', 'offset must be a multiple of limit (whole pages)');
  const { q, filters } = queryParameters(request.query);
  const allFilters = [...filters, ...filterClauses(request.filters)];
  return {
    q,
    query_by: QUERY_BY,
    query_by_weights: QUERY_BY_WEIGHTS,
    ...EXACT,
    ...(allFilters.length ? { filter_by: allFilters.join(' && ') } : {}),
    sort_by: request.sort !== 'relevance' ? SORT_BY[request.sort] : q === '*' ? TIE_BREAK : `_text_match:desc,${TIE_BREAK}`,
    page: offset / limit + 1,
    per_page: limit,
    include_fields: 'id',
  };
}

/** The search a did-you-mean starts from: every word of the query, up to two typos each, one hit. */
export function suggestionParameters(query: FtsQuery, filters: FtsFilters): SearchParams<VideoDocument> {
  const words = [...new Set(query.groups.flat().flatMap((term) => term.tokens))];
  const clauses = filterClauses(filters);
  return {
    q: words.join(' '),
    query_by: QUERY_BY,
    query_by_weights: QUERY_BY_WEIGHTS,
    ...EXACT,
    num_typos: 2,
    typo_tokens_threshold: 1,
    ...(clauses.length ? { filter_by: clauses.join(' && ') } : {}),
    sort_by: `_text_match:desc,${TIE_BREAK}`,
    page: 1,
    per_page: 1,
    include_fields: 'id',
  };
}

/** Every matched_tokens entry of a hit's highlights (either highlight format), as folded words. */
function matchedTokens(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) matchedTokens(item, into);
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key === 'matched_tokens') for (const token of [inner].flat(2)) if (typeof token === 'string') for (const word of tokenize(token)) into.add(word);
      if (key !== 'document') matchedTokens(inner, into);
    }
  }
  return into;
}

/** Optimal string alignment distance: edits, with a swap of neighbours counting as one. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/** The word itself when the hit has it, else the hit's closest word within two edits, else the word unchanged. */
function closest(word: string, matched: Set<string>): string {
  if (matched.has(word)) return word;
  let best = word;
  let bestDistance = 3;
  for (const candidate of matched) {
    const distance = editDistance(word, candidate);
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best;
}

export interface BackendOptions { config: Config; sql: Sql; log: Logger; retries?: number; minDelayMs?: number }

export function createTypesenseBackend(options: BackendOptions): SearchBackend {
  const target = typesenseTarget(options.config, options.log, { purpose: 'search', ...pick(options) });
  if (!target) throw new ConfigError(['TYPESENSE_URL: not set, so there is no Typesense to search']);
  const documents = () => target.client.collections<VideoDocument>(target.alias).documents();

  async function search(request: FtsRequest): Promise<FtsPage> {
    const parameters = searchParameters(request);
    const result: SearchResponse<VideoDocument> = await call(target!, 'search', () => documents().search(parameters));
    return { videoIds: (result.hits ?? []).map((hit) => hit.document.id), total: result.found, totalExact: true };
  }

  async function suggest(query: FtsQuery, filters: FtsFilters): Promise<string | null> {
    const result: SearchResponse<VideoDocument> = await call(target!, 'look for a suggestion', () => documents().search(suggestionParameters(query, filters)));
    const hit = result.hits?.[0];
    if (!hit) return null;
    const matched = matchedTokens(hit);
    let changed = false;
    const correct = (term: Term): Term => {
      const tokens = term.tokens.map((token) => closest(token, matched));
      if (tokens.every((token, index) => token === term.tokens[index])) return term;
      changed = true;
      return { text: tokens.join(' '), tokens };
    };
    const corrected: FtsQuery = { groups: query.groups.map((group) => group.map(correct)), excluded: query.excluded };
    if (!changed) return null;
    const found = await search({ query: corrected, filters, sort: 'relevance', offset: 0, limit: 1 });
    return found.total > 0 ? formatQuery(corrected) : null;
  }

  return { name: 'typesense', search, suggest, close: async () => {} };
}
