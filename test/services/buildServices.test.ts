import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../core/config.ts';
import { createLlmClient } from '../../core/llm/openaiClient.ts';
import { createLogger } from '../../core/log.ts';
import { buildServices } from '../../core/services/buildServices.ts';
import { createFileStore } from '../../core/stenograms/fileStore.ts';
import { connectMcp } from '../mcp/support.ts';
import { createKeyedUser } from '../support/api.ts';
import { killService, runCli, startService, temporaryDataDir, testServerKey } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { listeningUrl } from '../support/faults.ts';

// The composition root: every service from the configuration, one choice each, stand-ins by override.

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const log = createLogger('silent');
const build = (env: Record<string, string>, overrides = {}) =>
  buildServices(loadConfig({ DATA_DIR: '.afterimage-test', ...env }), { sql: db.sql, log }, overrides);
const standInLlm = (model: string) =>
  createLlmClient({ baseUrl: 'http://127.0.0.1:9/v1', model, contextTokens: 8192, concurrency: 1, timeoutMs: 1_000, log });

describe('buildServices', () => {
  it('builds the offline deployment from a configuration of defaults', async () => {
    const services = await build({});
    expect(services.sources.map((source) => source.name)).toEqual(['archive']);
    expect(services.subtitleSources.map((source) => source.name)).toEqual(['archive']);
    expect(services).toMatchObject({ llm: null, statusProbe: null, typesense: null });
    expect(services.summaryGenerator.model).toBe('afterimage-extractive-1');
    expect(services.stenogramGenerator.model).not.toBe(services.summaryGenerator.model);
    expect(services.stenogramStore.location).toMatch(/^file:.*\.afterimage-test\/stenograms$/);
  });

  it('chooses the LLM for summaries and stenograms alike when LLM_BASE_URL is set, and each source and probe by its setting', async () => {
    const services = await build({
      LLM_BASE_URL: 'http://127.0.0.1:9/v1',
      LLM_MODEL: 'configured-model',
      YOUTUBE_API_KEY: 'key',
      WAYBACK_ENABLED: 'true',
      YOUTUBE_CAPTIONS: 'true',
    });
    expect(services.llm?.model).toBe('configured-model');
    expect(services.summaryGenerator.model).toBe('configured-model');
    expect(services.stenogramGenerator.model).toBe('configured-model');
    expect(services.sources.map((source) => source.name)).toEqual(['archive', 'youtube_api', 'wayback']);
    expect(services.subtitleSources.map((source) => source.name)).toEqual(['wayback', 'archive', 'youtube']);
    expect(services.statusProbe).toBeTypeOf('function');
  });

  it('builds the generators from an overridden LLM client, and builds nothing it is given', async () => {
    const services = await build({}, { llm: standInLlm('stand-in-model') });
    expect(services.summaryGenerator.model).toBe('stand-in-model');
    expect(services.stenogramGenerator.model).toBe('stand-in-model');

    // Half an S3 configuration cannot be built; a stand-in store is never asked to.
    const halfS3 = { STENOGRAM_STORE: 's3://bucket', S3_ACCESS_KEY_ID: 'AKIA' };
    await expect(build(halfS3)).rejects.toThrow(ConfigError);
    const store = createFileStore('.afterimage-test/stand-in-stenograms');
    expect((await build(halfS3, { stenogramStore: store })).stenogramStore).toBe(store);
  });

  it('refuses TYPESENSE_URL without its key before any process starts', async () => {
    await expect(build({ TYPESENSE_URL: 'http://127.0.0.1:8108' })).rejects.toThrow(/TYPESENSE_API_KEY: required/);
  });
});

/** A loader hook (chained behind any other, tsx's too) naming each file a process's ESM imports resolve to, on its stderr. */
const namingResolved = `data:text/javascript,${encodeURIComponent(`export async function resolve(specifier, context, next) {
    const resolved = await next(specifier, context);
    process.stderr.write('resolved ' + resolved.url + '\\n');
    return resolved;
  }`)}`;
/** The packages of node_modules among what namingResolved named. */
const packagesNamed = (stderr: string) => [
  ...new Set([...stderr.matchAll(/^resolved \S*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//gm)].map((match) => match[1]!)),
];

/** The packages a fresh process resolves while it builds the services from `env`. */
async function packagesLoadedBuilding(env: Record<string, string>): Promise<string[]> {
  const script = `
    import { loadConfig } from ${JSON.stringify(new URL('../../core/config.ts', import.meta.url).href)};
    import { createLogger } from ${JSON.stringify(new URL('../../core/log.ts', import.meta.url).href)};
    import { buildServices } from ${JSON.stringify(new URL('../../core/services/buildServices.ts', import.meta.url).href)};
    await buildServices(loadConfig(JSON.parse(process.env.SERVICES_ENV)), { sql: null, log: createLogger('silent') });`;
  const { stderr } = await promisify(execFile)(
    process.execPath,
    ['--experimental-loader', namingResolved, '--import', 'tsx', '--input-type=module', '-e', script],
    { env: { ...process.env, SERVICES_ENV: JSON.stringify({ DATA_DIR: '.afterimage-test', ...env }) } },
  );
  return packagesNamed(stderr);
}

describe('what building the services loads', () => {
  it('imports the OpenAI SDK and the Typesense client only when LLM_BASE_URL and TYPESENSE_URL configure them', async () => {
    const [offline, configured] = await Promise.all([
      packagesLoadedBuilding({}),
      packagesLoadedBuilding({ LLM_BASE_URL: 'http://127.0.0.1:9/v1', TYPESENSE_URL: 'http://127.0.0.1:9', TYPESENSE_API_KEY: 'key' }),
    ]);
    expect(offline).toContain('zod');
    expect(offline).not.toContain('openai');
    expect(offline).not.toContain('typesense');
    expect(configured).toEqual(expect.arrayContaining(['openai', 'typesense']));
  }, 90_000); // two processes compiling the services' modules, on a busy machine
});

describe('what a started service loads', () => {
  it('starts `afterimage start` without the packages of what is not configured or not used yet, and loads the MCP SDK at the first /mcp call', async () => {
    // A user already, as on every start but the first: the first administrator's address is not checked for look-alikes.
    const { key } = await createKeyedUser(db.sql);
    const dataDir = await temporaryDataDir();
    const service = startService(['start'], {
      DATABASE_URL: db.url,
      DATA_DIR: dataDir.dir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      SECRET_KEY: await testServerKey(),
      NODE_OPTIONS: `--experimental-loader=${namingResolved}`,
    });
    try {
      const url = await listeningUrl(service);
      await service.waitForStderr(/"msg":"afterimage ready"/, 60_000);
      const started = packagesNamed(service.stderr());
      expect(started).toEqual(expect.arrayContaining(['zod', 'graphile-worker', 'polka']));
      // Each waits for its first use: a Typesense or an LLM configured, /mcp, an image, a summary or a stenogram, a timestamp or a zip, a new account.
      const waiting = [
        'typesense',
        'openai',
        '@modelcontextprotocol/sdk',
        'sharp',
        'franc',
        'iso-639-3',
        'stopwords-iso',
        '@orama/stemmers',
        'pkijs',
        'fflate',
        'unhomoglyph',
      ];
      for (const name of waiting) expect(started, name).not.toContain(name);

      const mcp = await connectMcp(url, key);
      expect((await mcp.listTools()).tools.length).toBeGreaterThan(0);
      await mcp.close();
      expect(packagesNamed(service.stderr())).toContain('@modelcontextprotocol/sdk');
    } finally {
      await killService(service, 'SIGTERM');
      await dataDir.remove();
    }
  }, 90_000);

  it('answers --help and config without loading graphile-worker, which only migrating and running jobs need', async () => {
    for (const args of [['--help'], ['config']]) {
      const result = await runCli(args, { NODE_OPTIONS: `--experimental-loader=${namingResolved}` });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toContain('resolved ');
      expect(result.stderr, args.join(' ')).not.toMatch(/^resolved .*\/node_modules\/graphile-worker\/dist\/index\.js$/m);
    }
  });
});
