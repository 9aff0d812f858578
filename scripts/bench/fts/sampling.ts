import type { QueryClass } from '../../../test/kit/corpus-queries.ts';
import { drive, type RequestStats, requestStats, type Sample } from '../lib/load.ts';
import { percentile, round } from '../lib/stats.ts';
import { cpuOf } from '../lib/usage.ts';
import { CLIENTS, EXACT_TOTAL_CAP, type BenchRequest, type Engine } from './shape.ts';

/** Keeps CLIENTS requests in flight until `count` are done or `seconds` have passed, the requests in turn. */
export const searches = (engine: Engine, requests: BenchRequest[], count: number, seconds: number) =>
  drive((i) => engine.search(requests[i % requests.length]!), { clients: CLIENTS, seconds, count });

export type Stats = RequestStats;

export const stats = (samples: Sample[]): Stats => requestStats(samples, 1);

/** The API process's CPU time per HTTP request, per query class (8 clients: what contention leaves aside). */
export function cpuPerRequest() {
  const spent = new Map<QueryClass, { us: number; requests: number }>();
  return {
    add(name: QueryClass, us: number, requests: number) {
      const sum = spent.get(name) ?? { us: 0, requests: 0 };
      spent.set(name, { us: sum.us + us, requests: sum.requests + requests });
    },
    msPerRequest: (name: QueryClass) => {
      const sum = spent.get(name);
      return sum?.requests ? round(sum.us / 1000 / sum.requests, 2) : null;
    },
  };
}

/** Compares each engine's answers to the backend's: totals where the backend counted exactly, pages for the date and duration sorts (each difference once). */
export async function agreement(engines: Engine[], requests: BenchRequest[]) {
  const differences = new Set<string>();
  let compared = 0;
  for (const request of requests) {
    const answers = await Promise.all(engines.map((engine) => engine.search(request).catch((error: Error) => error)));
    const reference = answers[0]!;
    if (reference instanceof Error) continue;
    for (const [index, answer] of answers.entries()) {
      if (index === 0 || answer instanceof Error) continue;
      compared += 1;
      const engine = engines[index]!.id;
      const exact = reference.total <= EXACT_TOTAL_CAP;
      if (exact && answer.total !== reference.total)
        differences.add(`${engine} \`${request.q}\` ${JSON.stringify(request.filters)}: total ${answer.total} vs ${reference.total}`);
      else if (exact && request.sort !== 'relevance' && answer.ids.join() !== reference.ids.join())
        differences.add(`${engine} \`${request.q}\` ${request.sort} ${JSON.stringify(request.filters)}: another page`);
    }
  }
  return { compared, differences: [...differences] };
}

/**
 * /proc counts CPU in 10 ms ticks, and a class's 60 requests take a few hundred ms of the API's CPU: read
 * around each request, a tick moved a class's figure by a sixth of a millisecond a request. Five passes
 * read around all of them take about a second, so a tick is under 1 % of the figure.
 */
const CPU_PASSES = 5;

/**
 * One client, no contention: each request of a class goes to the backend and then over HTTP, one at a
 * time, so the difference is what the HTTP request itself adds (key, quota, loading and highlighting the
 * page, JSON, a process hop). The API process's CPU time per request is read from /proc around
 * CPU_PASSES passes of the class's requests over HTTP alone.
 */
export async function oneClient(backend: Engine, http: Engine, apiPid: number, requests: BenchRequest[]) {
  for (const request of requests) await Promise.all([backend.search(request), http.search(request)]);
  const backendMs: number[] = [];
  const httpMs: number[] = [];
  for (const request of requests) {
    let begun = performance.now();
    await backend.search(request);
    backendMs.push(performance.now() - begun);
    begun = performance.now();
    await http.search(request);
    httpMs.push(performance.now() - begun);
  }
  const cpuBefore = cpuOf(apiPid) ?? 0;
  for (let pass = 0; pass < CPU_PASSES; pass++) for (const request of requests) await http.search(request);
  const apiCpuUs = (cpuOf(apiPid) ?? 0) - cpuBefore;
  const p50 = (values: number[]) =>
    round(
      percentile(
        [...values].sort((a, b) => a - b),
        50,
      ),
      2,
    );
  const backendP50 = p50(backendMs);
  const httpP50 = p50(httpMs);
  return {
    requests: requests.length,
    backendP50,
    httpP50,
    addedP50: round((httpP50 ?? 0) - (backendP50 ?? 0), 2),
    apiCpuMsPerRequest: round(apiCpuUs / 1000 / (CPU_PASSES * requests.length), 2),
  };
}
