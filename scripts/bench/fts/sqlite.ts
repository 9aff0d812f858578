import { createRequire } from 'node:module';
import { rmSync, statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { FtsSort } from '../../../core/fts/backend.ts';
import { parseQuery, tokenize, type FtsQuery, type Term } from '../../../core/fts/query.ts';
import { readSpool } from '../../../test/kit/corpus-spool.ts';
import type { VideoRow } from '../../../test/kit/corpus.ts';
import { CLIENTS, EXACT_TOTAL_CAP, PAGE_SIZE, type Answer, type BenchRequest, type Engine } from './shape.ts';

const sqliteModule = createRequire(import.meta.url).resolve('better-sqlite3');

/** The filter and sort columns beside an FTS5 table, a row per FTS5 rowid (`insert into meta values (?, …)`, nine columns). */
export const META_TABLE = `create table meta (id integer primary key, video_id text not null, status text not null, has_video integer not null,
      has_subtitles integer not null, has_summary integer not null, upload_day text, duration integer, view_count integer);`;
/** Relevance over the title database: title, tags and description weighted as Postgres weighs them. */
const TITLE_RELEVANCE = 'bm25(fts, 10.0, 5.0, 1.0)';

/** Builds the SQLite database from the spooled corpus: a contentless FTS5 table of the folded tokens (so both engines see the same words) and the filter/sort columns beside it. */
export async function buildSqlite(file: string, spool: string): Promise<{ ingestSeconds: number; optimizeSeconds: number; bytes: number }> {
  rmSync(file, { force: true });
  const db = new Database(file);
  const started = performance.now();
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`
    create virtual table fts using fts5(title, tags, description, content='', tokenize='unicode61 remove_diacritics 0');
    ${META_TABLE}`);
  const insertFts = db.prepare('insert into fts (rowid, title, tags, description) values (?, ?, ?, ?)');
  const insertMeta = db.prepare('insert into meta values (?, ?, ?, ?, ?, ?, ?, ?, ?)');
  const words = (text: string | null) => (text ? tokenize(text).join(' ') : '');
  let rowid = 0;
  const batch = db.transaction((rows: VideoRow[]) => {
    for (const v of rows) {
      rowid += 1;
      insertFts.run(rowid, words(v.title), words(v.tags.join(' ')), words(v.description));
      insertMeta.run(
        rowid,
        v.videoId,
        v.status,
        v.videoFileUrl ? 1 : 0,
        v.hasSubtitles ? 1 : 0,
        v.hasSummary ? 1 : 0,
        v.uploadDate,
        v.durationSeconds,
        v.viewCount,
      );
    }
  });
  for await (const rows of readSpool(spool)) batch(rows);
  const ingestSeconds = (performance.now() - started) / 1000;
  const optimizeStarted = performance.now();
  db.exec(`insert into fts (fts) values ('optimize'); pragma wal_checkpoint(truncate);`);
  const optimizeSeconds = (performance.now() - optimizeStarted) / 1000;
  db.close();
  return { ingestSeconds, optimizeSeconds, bytes: statSync(file).size };
}

const ftsTerm = (term: Term) => `"${term.tokens.join(' ')}"`;

/** The FTS5 MATCH expression of a parsed query: groups AND-ed, terms of a group OR-ed, exclusions NOT-ed. */
function fts5Match(query: FtsQuery): string {
  const positive = query.groups.map((group) => `(${group.map(ftsTerm).join(' OR ')})`).join(' AND ');
  return query.excluded.reduce((match, term) => `(${match}) NOT ${ftsTerm(term)}`, positive);
}

const SQLITE_ORDER: Record<Exclude<FtsSort, 'relevance'>, string> = {
  'date-desc': 'm.upload_day desc nulls last, m.view_count desc nulls last, m.video_id',
  'date-asc': 'm.upload_day asc nulls last, m.view_count desc nulls last, m.video_id',
  'duration-desc': 'm.duration desc nulls last, m.view_count desc nulls last, m.video_id',
  'duration-asc': 'm.duration asc nulls last, m.view_count desc nulls last, m.video_id',
};

function sqliteStatements(request: BenchRequest, relevance: string) {
  const match = fts5Match(parseQuery(request.q));
  const conditions = ['fts match ?'];
  const { status, hasVideo, hasSubtitles, hasSummary } = request.filters;
  if (status === 'live') conditions.push(`m.status = 'live'`);
  if (status === 'deleted') conditions.push(`m.status in ('deleted', 're-uploaded')`);
  if (hasVideo !== undefined) conditions.push(`m.has_video = ${hasVideo ? 1 : 0}`);
  if (hasSubtitles !== undefined) conditions.push(`m.has_subtitles = ${hasSubtitles ? 1 : 0}`);
  if (hasSummary !== undefined) conditions.push(`m.has_summary = ${hasSummary ? 1 : 0}`);
  const from = `from fts join meta m on m.id = fts.rowid where ${conditions.join(' and ')}`;
  return {
    page: {
      sql: `select m.video_id ${from} order by ${request.sort === 'relevance' ? `${relevance}, m.view_count desc nulls last, m.video_id` : SQLITE_ORDER[request.sort]} limit ${PAGE_SIZE}`,
      params: [match],
    },
    count: {
      sql:
        conditions.length === 1
          ? `select count(*) from (select 1 from fts where fts match ? limit ${EXACT_TOTAL_CAP + 1})`
          : `select count(*) from (select 1 ${from} limit ${EXACT_TOTAL_CAP + 1})`,
      params: [match],
    },
  };
}

const SQLITE_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.file, { readonly: true });
db.pragma('mmap_size = 8589934592');
db.pragma('cache_size = -131072');
const statements = new Map();
const prepare = (text) => {
  let statement = statements.get(text);
  if (!statement) statements.set(text, (statement = db.prepare(text).pluck()));
  return statement;
};
parentPort.on('message', ({ id, page, count }) => {
  try {
    const ids = prepare(page.sql).all(...page.params);
    const total = prepare(count.sql).get(...count.params);
    parentPort.postMessage({ id, ids, total });
  } catch (error) {
    parentPort.postMessage({ id, error: String(error && error.message) });
  }
});`;

/**
 * One worker thread (and SQLite connection) per client; each call goes to the least busy one. `relevance`
 * ranks the FTS5 table's matches (bm25 with its columns' weights).
 */
export function sqliteEngine(file: string, relevance = TITLE_RELEVANCE): Engine {
  const workers = Array.from({ length: CLIENTS }, () => ({
    worker: new Worker(SQLITE_WORKER, { eval: true, workerData: { file, module: sqliteModule } }),
    busy: 0,
  }));
  const pending = new Map<number, { resolve: (answer: Answer) => void; reject: (error: Error) => void }>();
  let nextId = 0;
  for (const { worker } of workers) {
    worker.on('message', (message: { id: number; ids?: string[]; total?: number; error?: string }) => {
      const waiter = pending.get(message.id)!;
      pending.delete(message.id);
      if (message.error !== undefined) waiter.reject(new Error(message.error));
      else waiter.resolve({ ids: message.ids!, total: message.total! });
    });
  }
  return {
    id: 'sqlite',
    search(request) {
      const statements = sqliteStatements(request, relevance);
      const slot = workers.reduce((best, candidate) => (candidate.busy < best.busy ? candidate : best));
      slot.busy += 1;
      const id = nextId++;
      return new Promise<Answer>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        slot.worker.postMessage({ id, ...statements });
      }).finally(() => {
        slot.busy -= 1;
      });
    },
    async close() {
      await Promise.all(workers.map(({ worker }) => worker.terminate()));
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// Postgres, in process and over HTTP
