import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

/**
 * A client nobody here wrote: openapi-typescript turns the served document into types, the code
 * below calls the API through openapi-fetch with them, and the TypeScript compiler checks it (the
 * project's strict options) before it runs against a live server.
 */
const CALLS = `import createClient from 'openapi-fetch';
import type { paths } from './schema.ts';

type Remaining = NonNullable<paths['/api/features']['get']['responses'][200]['headers']['RateLimit-Remaining']>;
// @ts-expect-error RateLimit-Remaining is declared as an integer, so text is refused (an undeclared header is unknown and takes anything)
export const notANumber: Remaining = 'ten';

const remaining = (response: Response): Remaining => Number(response.headers.get('RateLimit-Remaining'));

export async function callApi(baseUrl: string, key: string) {
  const client = createClient<paths>({ baseUrl, headers: { 'X-API-Key': key } });
  const health = await client.GET('/api/health');
  const first = await client.GET('/api/features');
  const second = await client.GET('/api/features');
  const tiers = await client.GET('/api/tiers');
  const refused = await client.GET('/api/fts', { params: { query: { q: '' } } });
  if (!health.data || !first.data || !second.data || !tiers.data) throw new Error('a call the API should answer failed');
  // Properties, not an index signature: with noUncheckedIndexedAccess a key named only by propertyNames would be boolean | undefined.
  const subtitleDownload: boolean = first.data.data.features.subtitleDownload;
  const proMinute: number | null = tiers.data.data.tiers.find((tier) => tier.name === 'pro')!.limits.requestsPerMinute.max;
  return {
    health: health.data.data.status,
    tier: first.data.data.tier.name,
    subtitleDownload,
    remaining: [remaining(first.response), remaining(second.response)],
    proMinute,
    refusal: refused.error?.error.code,
  };
}
`;

let db: TestDatabase;
let api: TestApi;
const dir = join('.afterimage-test', `generated-client-${process.pid}`);

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(db.sql);
  await mkdir(dir, { recursive: true });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await api?.close();
  await db?.drop();
});

/** The compiler's complaints about `file`, with the project's strict options. */
function typeErrors(file: string): string[] {
  const program = ts.createProgram([file], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noUncheckedIndexedAccess: true,
    allowImportingTsExtensions: true,
    noEmit: true,
    skipLibCheck: true,
    // The client needs the DOM's fetch types (the target's default libraries), not Node's: half the check's time.
    types: [],
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map((diagnostic) => `${diagnostic.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`);
}

describe('a client generated from the served document (openapi-typescript + openapi-fetch)', () => {
  it("compiles with the headers typed, and calls the API at the document's server URL", async () => {
    const document = (await (await fetch(new URL('/api/openapi.json', api.url))).json()) as { servers: Array<{ url: string }> };
    const schema = astToString(await openapiTS(document as Parameters<typeof openapiTS>[0]));
    expect(schema).toMatch(/"RateLimit-Remaining": number;/);
    await writeFile(join(dir, 'schema.ts'), schema);
    await writeFile(join(dir, 'calls.ts'), CALLS);

    // Called before the (slow) type check, so no connection of the pool sits idle past the server's keep-alive.
    const { key } = await createKeyedUser(db.sql, { tier: 'pro' });
    const { callApi } = (await import(pathToFileURL(join(process.cwd(), dir, 'calls.ts')).href)) as {
      callApi(baseUrl: string, key: string): Promise<Record<string, unknown>>;
    };
    const answers = await callApi(document.servers[0]!.url, key);
    expect(answers).toMatchObject({
      health: expect.stringMatching(/^(ok|degraded)$/),
      tier: 'pro',
      subtitleDownload: true,
      proMinute: 600,
      refusal: 'INVALID_INPUT',
    });
    const [first, second] = answers.remaining as number[];
    expect(second).toBe(first! - 1);

    expect(typeErrors(join(dir, 'calls.ts'))).toEqual([]);
  }, 120_000);
});
