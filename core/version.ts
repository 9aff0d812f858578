import { readFileSync } from 'node:fs';

/** This release's version (package.json): shown by the CLI, and named by every database connection (core/db/database.ts). */
export const version: string = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
