import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const sqlDir = fileURLToPath(new URL('../../sql/', import.meta.url));

export interface Migration {
  version: number;
  name: string;
  file: string;
  checksum: string;
  body: string;
}

/** The numbered files of sql/, in order, each with its checksum: what migrate applies and schemaIsCurrent compares. */
export async function readMigrations(dir = sqlDir): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((file) => /^\d{3}_[a-z0-9_]+\.sql$/.test(file)).sort();
  return Promise.all(
    files.map(async (file) => {
      const body = await readFile(join(dir, file), 'utf8');
      return {
        version: Number(file.slice(0, 3)),
        name: file.slice(4, -4),
        file,
        checksum: createHash('sha256').update(body).digest('hex'),
        body,
      };
    }),
  );
}
