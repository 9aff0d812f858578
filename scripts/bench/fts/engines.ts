/**
 * The three engines of the fts benchmark, each answering at the same boundary (a query in, a page of ids
 * and a total out): the Postgres backend in this process, GET /api/fts over HTTP, and SQLite FTS5 over the
 * same corpus (one worker thread and connection per client).
 */
import { rmSync, statSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { FtsFilters, FtsSort, SearchBackend } from '../../../core/fts/backend.ts';
import { type FtsQuery, parseQuery, type Term, tokenize } from '../../../core/fts/query.ts';
import { readSpool } from '../../../test/kit/corpus-spool.ts';
import type { VideoRow } from '../../../test/kit/corpus.ts';
import { round } from '../lib/stats.ts';

export const CLIENTS = 8;
export const PAGE_SIZE = 50;
/** The Postgres backend counts exactly up to this many matches; SQLite is held to the same. */
const EXACT_TOTAL_CAP = 10_000;

export interface BenchRequest {
  q: string;
  filters: FtsFilters;
  sort: FtsSort;
}
interface Answer {
  ids: string[];
  total: number;
}
export interface Engine {
  id: 'backend' | 'http' | 'sqlite';
  search(request: BenchRequest): Promise<Answer>;
  close(): Promise<unknown>;
}

export function backendEngine(backend: SearchBackend): Engine {
  return {
    id: 'backend',
    async search({ q, filters, sort }) {
      const page = await backend.search({ query: parseQuery(q), filters, sort, offset: 0, limit: PAGE_SIZE });
      return { ids: page.videoIds, total: page.total };
    },
    close: () => backend.close(),
  };
}

export function httpEngine(baseUrl: string, key: string): Engine {
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  const { hostname, port } = new URL(baseUrl);
  const search = ({ q, filters, sort }: BenchRequest) => {
    const params = new URLSearchParams({ q, pageSize: String(PAGE_SIZE), sort });
    for (const [name, value] of Object.entries(filters)) params.set(name, String(value));
    const path = `/api/fts?${params}`;
    return new Promise<Answer>((resolve, reject) => {
      const req = request({ agent, hostname, port, path, headers: { 'X-API-Key': key } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk)).on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) return reject(new Error(`status ${res.statusCode}: ${text.slice(0, 200)}`));
          const { data } = JSON.parse(text) as { data: { videos: Array<{ videoId: string }>; total: number } };
          resolve({ ids: data.videos.map((video) => video.videoId), total: data.total });
        });
      });
      req.on('error', reject).end();
    });
  };
  return { id: 'http', search, close: async () => agent.destroy() };
}

/**
 * SQLite from the spooled corpus: a contentless FTS5 table of the tokens tokenize() folds (so both engines
 * see the same words), and the filter and sort columns beside it. Times the ingest and the optimize.
 */
export async function buildSqlite(file: string, spool: string) {
  rmSync(file, { force: true });
  const db = new Database(file);
  const started = performance.now();
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`create virtual table fts using fts5(title, tags, description, content='', tokenize='unicode61 remove_diacritics 0');
    create table meta (id integer primary key, video_id text not null, status text not null, has_video integer not null,
      has_subtitles integer not null, has_summary integer not null, upload_day text, duration integer, view_count integer);`);
  const insertFts = db.prepare('insert into fts (rowid, title, tags, description) values (?, ?, ?, ?)');
  const insertMeta = db.prepare('insert into meta values (?, ?, ?, ?, ?, ?, ?, ?, ?)');
  const words = (text: string | null) => (text ? tokenize(text).join(' ') : '');
  let videos = 0;
  const batch = db.transaction((rows: VideoRow[]) => {
    for (const v of rows) {
      insertFts.run(++videos, words(v.title), words(v.tags.join(' ')), words(v.description));
      const flags = [v.videoFileUrl, v.hasSubtitles, v.hasSummary].map((flag) => (flag ? 1 : 0));
      insertMeta.run(videos, v.videoId, v.status, ...flags, v.uploadDate, v.durationSeconds, v.viewCount);
    }
  });
  for await (const rows of readSpool(spool)) batch(rows);
  const ingestSeconds = (performance.now() - started) / 1000;
  db.exec(`insert into fts (fts) values ('optimize'); pragma wal_checkpoint(truncate);`);
  const seconds = (performance.now() - started) / 1000;
  db.close();
  return {
    ingestSeconds: round(ingestSeconds, 1),
    seconds: round(seconds, 1),
    videosPerSecond: Math.round(videos / seconds),
    fileMiB: Math.round(statSync(file).size / 2 ** 20),
  };
}

const ftsTerm = (term: Term) => `"${term.tokens.join(' ')}"`;

/** The FTS5 MATCH expression of a parsed query: groups AND-ed, terms of a group OR-ed, exclusions NOT-ed. */
function fts5Match(query: FtsQuery): string {
  const positive = query.groups.map((group) => `(${group.map(ftsTerm).join(' OR ')})`).join(' AND ');
  return query.excluded.reduce((match, term) => `(${match}) NOT ${ftsTerm(term)}`, positive);
}

/** A page and a count (capped as the backend's) with the backend's filters, order and ties (views, then id). */
function sqliteStatements({ q, filters, sort }: BenchRequest) {
  const conditions = ['fts match ?'];
  if (filters.status === 'live') conditions.push(`m.status = 'live'`);
  if (filters.status === 'deleted') conditions.push(`m.status in ('deleted', 're-uploaded')`);
  const flags = { has_video: filters.hasVideo, has_subtitles: filters.hasSubtitles, has_summary: filters.hasSummary };
  for (const [column, flag] of Object.entries(flags)) if (flag !== undefined) conditions.push(`m.${column} = ${flag ? 1 : 0}`);
  const from = `from fts join meta m on m.id = fts.rowid where ${conditions.join(' and ')}`;
  const [key, direction] = sort.split('-');
  const order =
    sort === 'relevance' ? 'bm25(fts, 10.0, 5.0, 1.0)' : `m.${key === 'date' ? 'upload_day' : 'duration'} ${direction} nulls last`;
  const counted = conditions.length === 1 ? 'select 1 from fts where fts match ?' : `select 1 ${from}`;
  return {
    page: `select m.video_id ${from} order by ${order}, m.view_count desc nulls last, m.video_id limit ${PAGE_SIZE}`,
    count: `select count(*) from (${counted} limit ${EXACT_TOTAL_CAP + 1})`,
    match: fts5Match(parseQuery(q)),
  };
}

const SQLITE_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const db = new (require(workerData.module))(workerData.file, { readonly: true });
db.pragma('mmap_size = 8589934592');
db.pragma('cache_size = -131072');
const prepared = new Map();
const prepare = (text) => prepared.get(text) ?? prepared.set(text, db.prepare(text).pluck()).get(text);
parentPort.on('message', ({ id, page, count, match }) => {
  try {
    parentPort.postMessage({ id, ids: prepare(page).all(match), total: prepare(count).get(match) });
  } catch (error) {
    parentPort.postMessage({ id, error: String(error && error.message) });
  }
});`;

/** One worker thread (and SQLite connection) per client; each call goes to the least busy one. */
export function sqliteEngine(file: string): Engine {
  const module = createRequire(import.meta.url).resolve('better-sqlite3');
  const workers = Array.from({ length: CLIENTS }, () => ({
    worker: new Worker(SQLITE_WORKER, { eval: true, workerData: { file, module } }),
    busy: 0,
  }));
  const pending = new Map<number, { resolve: (answer: Answer) => void; reject: (error: Error) => void }>();
  let nextId = 0;
  for (const { worker } of workers)
    worker.on('message', ({ id, error, ...answer }: Answer & { id: number; error?: string }) => {
      const waiter = pending.get(id)!;
      pending.delete(id);
      if (error === undefined) waiter.resolve(answer);
      else waiter.reject(new Error(error));
    });
  return {
    id: 'sqlite',
    search(request) {
      const slot = workers.reduce((best, candidate) => (candidate.busy < best.busy ? candidate : best));
      slot.busy += 1;
      const id = nextId++;
      return new Promise<Answer>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        slot.worker.postMessage({ id, ...sqliteStatements(request) });
      }).finally(() => {
        slot.busy -= 1;
      });
    },
    close: () => Promise.all(workers.map(({ worker }) => worker.terminate())),
  };
}
