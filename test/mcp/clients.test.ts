/**
 * /mcp as third-party MCP clients meet it: the SDK's own client (what the MCP Inspector CLI and most
 * assistants run) without a key, with an OAuth provider, and reading tools/list.
 */
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import {
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams,
  registerClient,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { AccessDeniedError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { singleTypeSchema } from '../../api/mcp/tool.ts';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { connectMcp } from './support.ts';

let db: TestDatabase;
let api: TestApi;
let key: string;

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(db.sql);
  key = (await createKeyedUser(db.sql)).key;
});

afterAll(async () => {
  await api?.close();
  await db?.drop();
});

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
};
const postWithoutKey = () =>
  fetch(`${api.url}/mcp`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify(initialize),
  });

describe('a client without a key learns that keys are issued out of band (no OAuth)', () => {
  it('401 names the resource metadata (RFC 9728), which names no authorization server', async () => {
    const refused = await postWithoutKey();
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe(
      `Bearer realm="afterimage", resource_metadata="${api.url}/.well-known/oauth-protected-resource/mcp"`,
    );
    const { resourceMetadataUrl, error } = extractWWWAuthenticateParams(refused);
    expect(error).toBeUndefined();
    expect(resourceMetadataUrl?.href).toBe(`${api.url}/.well-known/oauth-protected-resource/mcp`);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(
      /^API_KEY_REQUIRED: .*Authorization: Bearer tsk_.*; there is no OAuth login here: API keys are issued from your account/,
    );

    // As the SDK's OAuth flow reads it, from the challenge or by the well-known path of /mcp.
    for (const options of [{ resourceMetadataUrl }, {}]) {
      const metadata = await discoverOAuthProtectedResourceMetadata(new URL(`${api.url}/mcp`), options);
      expect(metadata).toEqual({
        resource: `${api.url}/mcp`,
        resource_name: 'Afterimage MCP server',
        bearer_methods_supported: ['header'],
        resource_documentation: `${api.url}/api/docs`,
      });
      expect(metadata.authorization_servers).toBeUndefined();
    }
    const service = await api.call('/.well-known/oauth-protected-resource');
    expect(service.body).toMatchObject({ resource: api.url, bearer_methods_supported: ['header'] });
  });

  it("the SDK client without a key fails with the answer's explanation, not an OAuth error", async () => {
    const client = new Client({ name: 'no-key', version: '1.0.0' });
    const failure = await client.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`))).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(failure?.message).toContain('API_KEY_REQUIRED');
    expect(failure?.message).toContain('there is no OAuth login here');
    await client.close();
  });

  it('a client with an OAuth provider never opens a login: the metadata it finds names no authorization server', async () => {
    const redirects: URL[] = [];
    const provider: OAuthClientProvider = {
      redirectUrl: 'http://127.0.0.1:1/callback',
      clientMetadata: { redirect_uris: ['http://127.0.0.1:1/callback'], client_name: 'oauth-test' },
      clientInformation: () => undefined,
      // A client that registers itself (dynamic client registration), as most assistants do.
      saveClientInformation: () => {},
      tokens: () => undefined,
      saveTokens: () => {},
      redirectToAuthorization: (url) => void redirects.push(url),
      saveCodeVerifier: () => {},
      codeVerifier: () => '',
    };
    const client = new Client({ name: 'oauth', version: '1.0.0' });
    const failure = await client.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), { authProvider: provider })).then(
      () => undefined,
      (error: Error) => error,
    );
    // Its fallback to registering with the service itself (POST /register) is told, in OAuth's JSON, where keys come from.
    expect(failure?.message).toMatch(new RegExp(`^API keys are issued out of band: sign in at ${api.url}/account`));
    expect(failure?.message).not.toMatch(/Invalid OAuth error response|<html/i);
    expect(redirects).toEqual([]);
    await client.close();
  });

  it("the SDK's authorization server discovery finds none, and its client registration is refused with the explanation", async () => {
    const origin = new URL(api.url);
    expect(await discoverAuthorizationServerMetadata(origin)).toBeUndefined();
    expect(await discoverAuthorizationServerMetadata(new URL('/mcp', origin))).toBeUndefined();
    const refused = registerClient(origin, { clientMetadata: { redirect_uris: ['http://127.0.0.1:1/callback'] } });
    await expect(refused).rejects.toBeInstanceOf(AccessDeniedError);
    await expect(refused).rejects.toThrow(`API keys are issued out of band: sign in at ${api.url}/account`);
    for (const path of [
      '/.well-known/oauth-authorization-server',
      '/.well-known/oauth-authorization-server/mcp',
      '/.well-known/openid-configuration',
      '/.well-known/openid-configuration/mcp',
      '/mcp/.well-known/openid-configuration',
    ]) {
      const answer = await api.call(path, { headers: { Accept: 'application/json' } });
      expect(answer.status, path).toBe(404);
      expect(answer.body, path).toEqual({ error: 'invalid_request', error_description: expect.stringContaining(`${api.url}/account`) });
    }
  });

  it('a person posting the sign-up form still gets the page, not the JSON refusal', async () => {
    const form = await fetch(`${api.url}/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'text/html' },
      body: 'email=a%40b.example&password=x',
    });
    expect(form.headers.get('content-type')).toMatch(/^text\/html/);
    await form.body?.cancel();
  });
});

describe('tools/list is portable to clients with single-type dialects', () => {
  /** Every `type` keyword of a schema that is not a single name, with where it is. */
  function typeLists(node: unknown, path: string, found: string[] = []): string[] {
    if (!node || typeof node !== 'object') return found;
    const schema = node as Record<string, unknown>;
    if (Array.isArray(schema.type)) found.push(`${path}: ${JSON.stringify(schema.type)}`);
    for (const [keyword, value] of Object.entries(schema)) {
      if (keyword === 'properties')
        for (const [name, property] of Object.entries(value as object)) typeLists(property, `${path}.${name}`, found);
      else if (Array.isArray(value)) value.forEach((item, index) => typeLists(item, `${path}/${keyword}[${index}]`, found));
      else if (typeof value === 'object') typeLists(value, `${path}/${keyword}`, found);
    }
    return found;
  }

  it('every input and output schema has single types; null stays allowed where a value may be missing', async () => {
    const client = await connectMcp(api.url, key);
    const { tools } = await client.listTools();
    await client.close();
    expect(tools).toHaveLength(21);
    expect(
      tools.flatMap((tool) => [
        ...typeLists(tool.inputSchema, `${tool.name} input`),
        ...typeLists(tool.outputSchema, `${tool.name} output`),
      ]),
    ).toEqual([]);
    const getVideo = tools.find((tool) => tool.name === 'get_video')!;
    expect((getVideo.outputSchema!.properties as Record<string, unknown>).title).toEqual({ anyOf: [{ type: 'string' }, { type: 'null' }] });
    expect(getVideo.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
  });

  it('singleTypeSchema keeps a property named "type" and an anyOf already there', () => {
    expect(singleTypeSchema({ type: 'object', properties: { type: { type: ['string', 'null'] } } })).toEqual({
      type: 'object',
      properties: { type: { anyOf: [{ type: 'string' }, { type: 'null' }] } },
    });
    expect(singleTypeSchema({ type: ['integer', 'null'], anyOf: [{ minimum: 1 }, { type: 'null' }] })).toEqual({
      allOf: [{ anyOf: [{ type: 'integer' }, { type: 'null' }] }, { anyOf: [{ minimum: 1 }, { type: 'null' }] }],
    });
    expect(singleTypeSchema({ type: ['string'], enum: ['a'] })).toEqual({ type: 'string', enum: ['a'] });
  });
});
