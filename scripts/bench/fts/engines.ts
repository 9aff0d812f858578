import { Agent, request as httpRequest } from 'node:http';
import type { SearchBackend } from '../../../core/fts/backend.ts';
import { createPostgresBackend } from '../../../core/fts/postgres.ts';
import { parseQuery } from '../../../core/fts/query.ts';
import { recordingPool } from '../lib/recordingPool.ts';
import { CLIENTS, PAGE_SIZE, type Answer, type BenchRequest, type Engine } from './shape.ts';

export function backendEngine(backend: SearchBackend): Engine {
  return {
    id: 'backend',
    async search(request) {
      const page = await backend.search({
        query: parseQuery(request.q),
        filters: request.filters,
        sort: request.sort,
        offset: 0,
        limit: PAGE_SIZE,
      });
      return { ids: page.videoIds, total: page.total };
    },
    close: () => backend.close(),
  };
}

export function httpEngine(baseUrl: string, key: string): Engine {
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  const { hostname, port } = new URL(baseUrl);
  return {
    id: 'http',
    search(request) {
      const params = new URLSearchParams({ q: request.q, pageSize: String(PAGE_SIZE), sort: request.sort });
      for (const [name, value] of Object.entries(request.filters)) params.set(name, String(value));
      if (request.in) params.set('in', request.in);
      return new Promise<Answer>((resolve, reject) => {
        const req = httpRequest({ agent, hostname, port, path: `/api/fts?${params}`, headers: { 'X-API-Key': key } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            if (res.statusCode !== 200) return reject(new Error(`status ${res.statusCode}: ${text.slice(0, 200)}`));
            const { data } = JSON.parse(text) as { data: { videos: Array<{ videoId: string }>; total: number } };
            resolve({ ids: data.videos.map((video) => video.videoId), total: data.total });
          });
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end();
      });
    },
    async close() {
      agent.destroy();
    },
  };
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of every statement one backend search runs: the search is run once through a
 * pool that records its statements, then they are replayed in one transaction (SET LOCALs as they were,
 * each SELECT explained) and rolled back.
 */
export async function explainSearch(url: string, timeoutMs: number, request: BenchRequest): Promise<string> {
  const { sql, statements, stop } = recordingPool(url);
  try {
    await createPostgresBackend({ sql, timeoutMs }).search({
      query: parseQuery(request.q),
      filters: request.filters,
      sort: request.sort,
      offset: 0,
      limit: PAGE_SIZE,
    });
    stop();
    const plans: string[] = [];
    await sql
      .begin(async (tx) => {
        for (const { text, params } of statements) {
          if (/^\s*(begin|commit|rollback)\b/i.test(text) || text.includes('pg_catalog.')) continue;
          if (!/^\s*(with|select)\b/i.test(text)) {
            await tx.unsafe(text, params as never[]);
            continue;
          }
          const rows = await tx.unsafe(`explain (analyze, buffers, format text) ${text}`, params as never[]);
          plans.push(`${text.replace(/\s+/g, ' ').trim()}\n${rows.map((row) => row['QUERY PLAN']).join('\n')}`);
        }
        throw new Rollback();
      })
      .catch((error: unknown) => {
        if (!(error instanceof Rollback)) throw error;
      });
    return plans.join('\n\n');
  } finally {
    await sql.end({ timeout: 5 });
  }
}
class Rollback extends Error {}

// ---------------------------------------------------------------------------------------------------
// Measurement
