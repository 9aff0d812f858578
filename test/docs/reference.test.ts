import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { errorStatus } from '../../core/errors.ts';
import { limitName } from '../../core/schemas.ts';
import { headingAnchors } from '../support/markdown.ts';

const root = join(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const reference = read('api/REFERENCE.md');

const anchors = headingAnchors(reference);

describe('api/REFERENCE.md', () => {
  it('every link to a part of it, from it and from the other docs, names a heading it has', () => {
    const links = [
      ...[...reference.matchAll(/\]\(#([^)]+)\)/g)].map((match) => `REFERENCE.md#${match[1]}`),
      ...['README.md', 'OPERATING.md', 'CONTRIBUTING.md', 'core/config.ts'].flatMap((path) =>
        [...read(path).matchAll(/REFERENCE\.md#([a-z0-9-]+)/g)].map((match) => `${path} → REFERENCE.md#${match[1]}`),
      ),
    ];
    expect(links.length).toBeGreaterThan(20);
    expect(links.filter((link) => !anchors.has(link.split('#')[1]!))).toEqual([]);
  });

  it('gives every error code the status the server answers it with', () => {
    for (const [code, status] of Object.entries(errorStatus)) expect(reference).toContain(`| \`${code}\` | ${status} |`);
  });

  it("names the MCP protocol version the SDK's client and server negotiate", () => {
    expect(reference).toContain(`(protocol ${LATEST_PROTOCOL_VERSION},`);
  });

  it('lists every limit in the tiers table', () => {
    for (const name of limitName.options) expect(reference).toMatch(new RegExp(`^\\| \`${name}\` \\|`, 'm'));
  });
});
