import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { McpContext } from '../../../api/mcp/context.ts';
import { createMcpServer } from '../../../api/mcp/server.ts';
import { type BenchContext, packageVersion } from '../lib/harness.ts';
import { sourcelessApiEnv, startService } from '../lib/processes.ts';
import { round } from '../lib/stats.ts';
import { connectClient, measure, operations, type OperationResult } from './operations.ts';
import type { Seeded } from './seed.ts';
import { CONCURRENT_CLIENTS, CONCURRENT_REQUESTS_PER_CLIENT, SEQUENTIAL_REQUESTS, WARMUP_REQUESTS } from './shape.ts';

/**
 * What building the per-request McpServer costs on its own (api/mcp/handler.ts does it for every
 * POST): registering every tool, resource and prompt. In process, with a stub context (nothing runs).
 */
export function serverConstructionUs(): number {
  const ctx = { deps: { version: packageVersion }, caller: {}, log: { child: () => ({}) }, requestId: 'bench' } as unknown as McpContext;
  for (let i = 0; i < 50; i++) void createMcpServer(ctx).close();
  const n = 500;
  const started = performance.now();
  for (let i = 0; i < n; i++) void createMcpServer(ctx).close();
  return round(((performance.now() - started) * 1000) / n, 0)!;
}

export function apiEnv(ctx: BenchContext, url: string): Record<string, string> {
  return sourcelessApiEnv(ctx.dataDir, url, 'mcp');
}

export async function latencies(
  ctx: BenchContext,
  env: Record<string, string>,
  seeded: Seeded,
  keys: string[],
  problems: string[],
): Promise<OperationResult[]> {
  const api = await startService('api', env);
  const results: OperationResult[] = [];
  const clients: Client[] = [];
  try {
    const baseUrl = api.url!;
    ctx.progress(`latency: API pid ${api.pid} at ${baseUrl}`);
    for (let c = 0; c < CONCURRENT_CLIENTS; c++) clients.push(await connectClient(baseUrl, keys[c]!));
    const sequential = [{ client: clients[0], key: keys[0]! }];
    const concurrent = clients.map((client, c) => ({ client, key: keys[c]! }));
    for (const op of operations(baseUrl, seeded)) {
      await measure(api, op, concurrent, Math.ceil(WARMUP_REQUESTS / CONCURRENT_CLIENTS));
      const seq = await measure(api, op, sequential, SEQUENTIAL_REQUESTS);
      const conc = await measure(api, op, concurrent, CONCURRENT_REQUESTS_PER_CLIENT);
      for (const [mode, m] of [
        ['sequential', seq],
        ['concurrent', conc],
      ] as const) {
        if (m.failures > 0) problems.push(`${op.id} ${mode}: ${m.failures} of ${m.requests} failed, first: ${m.firstFailure}`);
      }
      ctx.progress(
        `${op.id}: sequential p50 ${seq.p50Ms} ms p99 ${seq.p99Ms} ms; ${CONCURRENT_CLIENTS} clients p50 ${conc.p50Ms} ms p99 ${conc.p99Ms} ms, ${conc.requestsPerSecond} req/s; failures ${seq.failures + conc.failures}`,
      );
      results.push({ id: op.id, label: op.label, kind: op.kind, sequential: seq, concurrent: conc });
    }
  } finally {
    await Promise.all(clients.map((client) => client.close().catch(() => {})));
    await api.stop();
  }
  return results;
}

/** MCP against REST for the same work: the difference of each figure (MCP − REST), ms and µs. */
export function mcpOverhead(ops: OperationResult[]) {
  const byId = (id: string) => ops.find((op) => op.id === id);
  const diff = (a: number | null, b: number | null) => (a === null || b === null ? null : round(a - b, 2));
  return (
    [
      ['mcp-get_video_status_history', 'rest-status-history', 'Δ MCP overhead, status history (same core function)'],
      ['mcp-search_videos', 'rest-fts', 'Δ MCP overhead, search (same core function)'],
      ['mcp-get_video', 'rest-status-history', 'Δ get_video vs REST status-history (different queries)'],
    ] as const
  ).flatMap(([mcpId, restId, pair]) => {
    const mcp = byId(mcpId);
    const rest = byId(restId);
    if (!mcp || !rest) return [];
    return [
      {
        pair,
        sequentialP50Ms: diff(mcp.sequential.p50Ms, rest.sequential.p50Ms),
        sequentialP99Ms: diff(mcp.sequential.p99Ms, rest.sequential.p99Ms),
        concurrentP50Ms: diff(mcp.concurrent.p50Ms, rest.concurrent.p50Ms),
        concurrentP99Ms: diff(mcp.concurrent.p99Ms, rest.concurrent.p99Ms),
        serverCpuUs: diff(mcp.sequential.serverCpuUsPerRequest, rest.sequential.serverCpuUsPerRequest),
      },
    ];
  });
}
