import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connect } from '../../core/db/database.ts';
import { embeddedLayout, embeddedUrl, ensureEmbeddedPostgres } from '../../core/db/embedded.ts';
import { createLogger } from '../../core/log.ts';
import { processAlive } from '../../core/processAlive.ts';
import { msUntil, signalPostmaster } from '../kit/databaseOutage.ts';
import { temporaryDataDir } from '../support/cli.ts';

// After a kill -9 every service of a DATA_DIR finds the cluster down in the same second, and the test
// kits start it too: the start lock lets one of them start it, and every one of them gets a cluster
// that takes connections.

let dataDir: { dir: string; remove(): Promise<void> };
const lines: string[] = [];
const log = createLogger('info', {}, (line) => void lines.push(line));

beforeAll(async () => {
  dataDir = await temporaryDataDir({ migrated: true });
  await ensureEmbeddedPostgres(dataDir.dir, log);
}, 60_000);

afterAll(() => dataDir?.remove(), 60_000);

it('three starters at once after a kill -9 start one postmaster, and each can connect', async () => {
  for (let round = 0; round < 3; round++) {
    const oldPid = signalPostmaster(dataDir.dir, 'SIGKILL');
    await msUntil(async () => !processAlive(oldPid), 'exit of the killed postmaster', 30_000);
    lines.length = 0;
    const serverLogBefore = (await readFile(embeddedLayout(dataDir.dir).logFile, 'utf8')).length;
    const urls = await Promise.all([0, 1, 2].map(() => ensureEmbeddedPostgres(dataDir.dir, log)));
    expect(lines.filter((line) => line.includes('"msg":"embedded PostgreSQL started"'))).toHaveLength(1);
    // A second postmaster started beside the first says so in the server log before it gives up (if it does).
    const serverLog = (await readFile(embeddedLayout(dataDir.dir).logFile, 'utf8')).slice(serverLogBefore);
    expect(serverLog).not.toMatch(/lock file .* already exists|is another postmaster/);
    for (const url of new Set(urls)) {
      const sql = connect(url, { max: 1, role: 'test' });
      try {
        expect(await sql`select 1 as one`).toEqual([{ one: 1 }]);
      } finally {
        await sql.end();
      }
    }
    expect(urls[0]).toBe(embeddedUrl(dataDir.dir));
  }
}, 120_000);
