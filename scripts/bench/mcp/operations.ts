import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { packageVersion } from '../lib/harness.ts';
import type { ServiceProcess } from '../lib/processes.ts';
import { percentile, round } from '../lib/stats.ts';
import { cpuOf } from '../lib/usage.ts';
import type { Seeded } from './seed.ts';
import { PAGE_SIZE } from './shape.ts';

type Call = (client: Client | undefined, key: string, i: number) => Promise<string | undefined>;

interface Operation {
  id: string;
  label: string;
  kind: 'mcp' | 'rest';
  call: Call;
}

interface Measured {
  requests: number;
  failures: number;
  firstFailure: string | null;
  seconds: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  serverCpuUsPerRequest: number | null;
}

export interface OperationResult {
  id: string;
  label: string;
  kind: 'mcp' | 'rest';
  sequential: Measured;
  concurrent: Measured;
}

export async function connectClient(baseUrl: string, key: string): Promise<Client> {
  const client = new Client({ name: 'afterimage-bench', version: packageVersion });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', baseUrl), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }),
  );
  return client;
}

/** A tool call that must succeed: the problem, or undefined. */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  check: (data: any) => boolean,
): Promise<string | undefined> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) return `${name}: ${JSON.stringify(result.content).slice(0, 200)}`;
  return check(result.structuredContent) ? undefined : `${name}: unexpected ${JSON.stringify(result.structuredContent).slice(0, 200)}`;
}

async function getJson(url: string, key: string, check: (data: any) => boolean): Promise<string | undefined> {
  const response = await fetch(url, { headers: { 'X-API-Key': key } });
  const body = (await response.json()) as { data?: unknown };
  if (response.status !== 200)
    return `GET ${url.replace(/^https?:\/\/[^/]+/, '')}: ${response.status} ${JSON.stringify(body).slice(0, 200)}`;
  return check(body.data) ? undefined : `GET ${url}: unexpected ${JSON.stringify(body).slice(0, 200)}`;
}

export function operations(baseUrl: string, seeded: Seeded): Operation[] {
  const video = (i: number) => seeded.videoIds[(i * 7) % seeded.videoIds.length]!;
  const query = (i: number) => seeded.words[i % seeded.words.length]!;
  const searched = (data: any) => Array.isArray(data?.videos) && data.videos.length > 0;
  return [
    {
      id: 'mcp-get_video',
      label: 'MCP tools/call get_video',
      kind: 'mcp',
      call: (client, _, i) => callTool(client!, 'get_video', { videoId: video(i) }, (data) => data?.videoId === video(i)),
    },
    {
      id: 'mcp-get_video_status_history',
      label: 'MCP tools/call get_video_status_history',
      kind: 'mcp',
      call: (client, _, i) => callTool(client!, 'get_video_status_history', { videoId: video(i) }, (data) => data?.videoId === video(i)),
    },
    {
      id: 'rest-status-history',
      label: 'REST GET /api/videos/:id/status-history',
      kind: 'rest',
      call: (_, key, i) => getJson(`${baseUrl}/api/videos/${video(i)}/status-history`, key, (data) => data?.videoId === video(i)),
    },
    {
      id: 'mcp-search_videos',
      label: `MCP tools/call search_videos (pageSize ${PAGE_SIZE})`,
      kind: 'mcp',
      call: (client, _, i) => callTool(client!, 'search_videos', { q: query(i), pageSize: PAGE_SIZE }, searched),
    },
    {
      id: 'rest-fts',
      label: `REST GET /api/fts?q=…&pageSize=${PAGE_SIZE}`,
      kind: 'rest',
      call: (_, key, i) => getJson(`${baseUrl}/api/fts?q=${encodeURIComponent(query(i))}&pageSize=${PAGE_SIZE}`, key, searched),
    },
  ];
}

/** `perClient` calls by each of `clients.length` clients at once (each sequential); latencies in ms. */
export async function measure(
  api: ServiceProcess,
  op: Operation,
  clients: Array<{ client: Client | undefined; key: string }>,
  perClient: number,
): Promise<Measured> {
  const latencies: number[] = [];
  let failures = 0;
  let firstFailure: string | null = null;
  const cpuBefore = cpuOf(api.pid);
  const started = performance.now();
  await Promise.all(
    clients.map(async ({ client, key }, c) => {
      for (let n = 0; n < perClient; n++) {
        const i = c * perClient + n;
        const t = performance.now();
        let problem: string | undefined;
        try {
          problem = await op.call(client, key, i);
        } catch (error) {
          problem = `${op.id}: ${(error as Error).message}`;
        }
        latencies.push(performance.now() - t);
        if (problem) {
          failures += 1;
          firstFailure ??= problem;
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = cpuOf(api.pid);
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    failures,
    firstFailure,
    seconds: round(seconds, 2)!,
    requestsPerSecond: round(latencies.length / seconds, 0)!,
    p50Ms: round(percentile(latencies, 50), 2)!,
    p99Ms: round(percentile(latencies, 99), 2)!,
    meanMs: round(latencies.reduce((sum, ms) => sum + ms, 0) / latencies.length, 2)!,
    serverCpuUsPerRequest: cpuBefore === undefined || cpuAfter === undefined ? null : round((cpuAfter - cpuBefore) / latencies.length, 0),
  };
}
