import * as redoclyPackage from '@redocly/openapi-core';
import { Document, Spectral, type RulesetDefinition } from '@stoplight/spectral-core';
import { Json } from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

/**
 * The document as the server sends it (GET /api/openapi.json, servers included), linted by Redocly
 * (recommended ruleset) and Spectral (oas ruleset). Neither may report an error; each warning kept
 * is listed here, where it is, and why. A new warning fails, and so does one listed that is gone.
 */
const KEPT_WARNINGS: Array<{ rule: string; at: string; why: string }> = [
  ...['stream', 'continue'].map((last) => ({
    rule: 'redocly no-ambiguous-paths',
    at: `#/paths/~1api~1search~1{sessionId}~1${last}`,
    why: 'the spec\'s paths: /api/search/background-status/{channelId} is matched first, and session ids are UUIDs, never "background-status"',
  })),
  {
    rule: 'redocly no-illogical-composition-keywords',
    at: '#/paths/~1api~1subtitles~1bulk-download/post/requestBody/content/application~1json/schema/oneOf',
    why: 'oneOf [format "zip" (required), format json/srt/vtt/txt (optional, default json)] cannot overlap (zip is in one enum only); the rule wants format required in both, which would make it required',
  },
  ...['get', 'post', 'delete'].map((method) => ({
    rule: 'redocly no-illogical-composition-keywords',
    at: `#/paths/~1mcp/${method}/responses/503/content/application~1json/schema/oneOf`,
    why: 'the REST envelope (error.code a string of an enum) and a JSON-RPC error (error.code an integer, jsonrpc and id required) never both match; the rule compares property names, not their types',
  })),
  ...['get', 'delete'].flatMap((method) => [
    {
      rule: 'redocly operation-2xx-response',
      at: `#/paths/~1mcp/${method}/responses`,
      why: 'GET and DELETE /mcp are declared to say what they answer, 405: the MCP transport of a server without sessions has no success for them',
    },
    {
      rule: 'spectral operation-success-response',
      at: `paths./mcp.${method}.responses`,
      why: "the same as Redocly's operation-2xx-response above",
    },
  ]),
  {
    rule: 'spectral info-contact',
    at: 'info',
    why: 'the project has no public contact address, and an invented one would send people nowhere',
  },
];

let db: TestDatabase;
let api: TestApi;
let text: string;

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(db.sql);
  // Not kept alive: linting blocks this process (the server's too) for longer than the server keeps an idle
  // socket, and the next fetch would reuse the socket the server's overdue timer then closes (ECONNRESET).
  const response = await fetch(`${api.url}/api/openapi.json`, { headers: { connection: 'close' } });
  text = await response.text();
});
afterAll(async () => {
  await api?.close();
  await db?.drop();
});

/** The two calls used, typed by hand: resolving them against the package's own Config types took tsc 15 s, a third of its run. */
const redocly = redoclyPackage as unknown as {
  createConfig(config: { extends: string[] }): Promise<object>;
  lintFromString(options: {
    source: string;
    absoluteRef: string;
    config: object;
  }): Promise<Array<{ severity: string; ruleId: string; message: string; location: Array<{ pointer?: string }> }>>;
};

async function redoclyProblems() {
  const config = await redocly.createConfig({ extends: ['recommended'] });
  const problems = await redocly.lintFromString({ source: text, absoluteRef: 'openapi.json', config });
  return problems.map((problem) => ({
    severity: problem.severity === 'error' ? 'error' : 'warning',
    rule: `redocly ${problem.ruleId}`,
    at: problem.location[0]?.pointer ?? '',
    message: problem.message,
  }));
}

async function spectralProblems() {
  const spectral = new Spectral();
  // Its rules as the ruleset recommends them (what `extends: spectral:oas` enables); the cast: the package types its rulesets narrower than setRuleset takes.
  spectral.setRuleset(oas as RulesetDefinition);
  const results = await spectral.run(new Document(text, Json, 'openapi.json'));
  // Spectral's severities: 0 error, 1 warning, 2 information, 3 hint.
  return results.map((result) => ({
    severity: ['error', 'warning', 'information', 'hint'][result.severity]!,
    rule: `spectral ${result.code}`,
    at: result.path.join('.'),
    message: result.message,
  }));
}

describe('the served OpenAPI document, linted', () => {
  it('Redocly and Spectral: no errors, and only the warnings kept above', async () => {
    const problems = [...(await redoclyProblems()), ...(await spectralProblems())];
    const named = (problem: { rule: string; at: string }) => `${problem.rule} at ${problem.at}`;
    expect(problems.filter((problem) => problem.severity === 'error').map((problem) => `${named(problem)}: ${problem.message}`)).toEqual(
      [],
    );
    const kept = new Set(KEPT_WARNINGS.map(named));
    const warnings = problems.filter((problem) => problem.severity === 'warning');
    expect(warnings.filter((problem) => !kept.has(named(problem))).map((problem) => `${named(problem)}: ${problem.message}`)).toEqual([]);
    expect([...kept].filter((entry) => !warnings.some((problem) => named(problem) === entry))).toEqual([]);
  }, 60_000);
});

describe('the servers entry of the served document', () => {
  const serversOf = async (url: string, headers: Record<string, string> = {}) =>
    ((await (await fetch(`${url}/api/openapi.json`, { headers })).json()) as { servers: Array<{ url: string }> }).servers;

  it('is the origin the request was sent to, an absolute URL a client in Node can use', async () => {
    expect(await serversOf(api.url)).toEqual([{ url: api.url, description: 'this server' }]);
    // Forwarded headers count only behind a trusted proxy.
    expect(await serversOf(api.url, { 'X-Forwarded-Host': 'evil.example', 'X-Forwarded-Proto': 'https' })).toEqual([
      expect.objectContaining({ url: api.url }),
    ]);
  });

  it('is PUBLIC_URL when set, and the forwarded host and scheme with TRUST_PROXY', async () => {
    const withPublicUrl = await startTestApi(db.sql, { PUBLIC_URL: 'https://archive.example.org/' });
    const behindProxy = await startTestApi(db.sql, { TRUST_PROXY: 'true' });
    try {
      expect(await serversOf(withPublicUrl.url)).toEqual([expect.objectContaining({ url: 'https://archive.example.org' })]);
      expect(await serversOf(behindProxy.url, { 'X-Forwarded-Host': 'api.example.org', 'X-Forwarded-Proto': 'https' })).toEqual([
        expect.objectContaining({ url: 'https://api.example.org' }),
      ]);
    } finally {
      await withPublicUrl.close();
      await behindProxy.close();
    }
  });
});
