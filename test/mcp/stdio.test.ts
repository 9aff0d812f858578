import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { addVideos, channelIdFor, videoIdFor } from '../support/subtitles.ts';
import { textOf } from './support.ts';

let db: TestDatabase;
let api: TestApi;
let key: string;
const videoId = videoIdFor('mcp-stdio');

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(db.sql);
  key = (await createKeyedUser(db.sql)).key;
  await addVideos(db.sql, channelIdFor('mcp-stdio'), [{ videoId, title: 'Bridged' }]);
});

afterAll(async () => {
  await api?.close();
  await db?.drop();
});

const bridge = (args: string[], env: Record<string, string> = {}) =>
  new StdioClientTransport({
    command: process.execPath,
    args: ['scripts/bin.mjs', 'mcp', ...args],
    env: { ...(process.env as Record<string, string>), ...env },
    stderr: 'pipe',
  });

describe('afterimage mcp (stdio bridge)', () => {
  it('passes tools, resources and prompts through to /mcp', async () => {
    const client = new Client({ name: 'stdio-test', version: '1.0.0' });
    await client.connect(bridge(['--url', api.url, '--key', key]));
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('get_video');
    const video = await client.callTool({ name: 'get_video', arguments: { videoId } });
    expect(video.structuredContent).toMatchObject({ videoId, title: 'Bridged' });
    expect((await client.listPrompts()).prompts).toHaveLength(3);
    const missing = await client.callTool({ name: 'get_video', arguments: { videoId: videoIdFor('nowhere') } });
    expect(textOf(missing)).toMatch(/^NOT_FOUND/);
    await client.close();
  }, 30_000);

  it('takes the address and key from AFTERIMAGE_URL and AFTERIMAGE_API_KEY', async () => {
    const client = new Client({ name: 'stdio-test', version: '1.0.0' });
    await client.connect(bridge([], { AFTERIMAGE_URL: api.url, AFTERIMAGE_API_KEY: key }));
    expect((await client.callTool({ name: 'get_usage', arguments: {} })).structuredContent).toMatchObject({ tier: { name: 'pro' } });
    await client.close();
  }, 30_000);

  it('no service at the address: the error names the address, the cause and what to do (not only "fetch failed")', async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const client = new Client({ name: 'stdio-test', version: '1.0.0' });
    const refused = await client.connect(bridge(['--url', `http://127.0.0.1:${closedPort}`, '--key', key])).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(refused?.message).toContain(
      `afterimage: cannot reach http://127.0.0.1:${closedPort}/mcp (ECONNREFUSED): nothing listens there: start the service`,
    );
    await client.close();
  }, 30_000);

  it.each([
    [
      'no key',
      ['--url', 'http://127.0.0.1:1'],
      /give an API key with --key tsk_… \(or AFTERIMAGE_API_KEY\) in the assistant's configuration/,
    ],
    ['no address', ['--key', `tsk_${'y'.repeat(48)}`], /give the service address with --url http:\/\/host:8080 \(or AFTERIMAGE_URL\)/],
  ])(
    '%s: the client is answered with why, as a JSON-RPC error, and the bridge exits non-zero',
    async (_name, args, why) => {
      const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AFTERIMAGE_'))) as Record<
        string,
        string
      >;
      const client = new Client({ name: 'stdio-test', version: '1.0.0' });
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: ['scripts/bin.mjs', 'mcp', ...args],
        env,
        stderr: 'pipe',
      });
      const refused = await client.connect(transport).then(
        () => undefined,
        (error: Error) => error,
      );
      expect(refused?.message).toMatch(why);
      expect(refused?.message).not.toMatch(/Connection closed/);
      await client.close();

      // The same by hand: one answer to initialize on stdout, then exit code 2 (a mistake in the call).
      const child = spawn(process.execPath, ['scripts/bin.mjs', 'mcp', ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'initialize', params: {} })}\n`);
      const exitCode = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(exitCode).toBe(2);
      const answer = JSON.parse(stdout.trim());
      expect(answer).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32603, message: expect.stringMatching(why) } });
    },
    30_000,
  );

  it('a bad key is an error the assistant sees', async () => {
    const client = new Client({ name: 'stdio-test', version: '1.0.0' });
    await expect(client.connect(bridge(['--url', api.url, '--key', `tsk_${'y'.repeat(48)}`]))).rejects.toThrow();
    await client.close();
  }, 30_000);
});
