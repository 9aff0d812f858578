import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { headingAnchors } from '../support/markdown.ts';

// Every link of the docs a newcomer reads to a file of this repository, or to a part of one, leads
// somewhere: the file exists, and its anchor names a heading of that file.

const root = join(import.meta.dirname, '..', '..');
const DOCS = ['README.md', 'OPERATING.md', 'CONTRIBUTING.md', 'api/REFERENCE.md', 'scripts/bench/results/SUMMARY.md'];

/** Links in Markdown outside code: [text](target), images included; absolute URLs are not ours to check. */
function localLinks(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!).filter((target) => !/^[a-z]+:/i.test(target));
}

describe('the docs', () => {
  for (const doc of DOCS) {
    it(`${doc}: every link to this repository resolves, anchors included`, () => {
      const text = readFileSync(join(root, doc), 'utf8');
      const broken = localLinks(text).filter((target) => {
        const [path, fragment] = target.split('#') as [string, string | undefined];
        const file = path ? normalize(join(dirname(join(root, doc)), path)) : join(root, doc);
        if (!existsSync(file)) return true;
        return fragment !== undefined && file.endsWith('.md') && !headingAnchors(readFileSync(file, 'utf8')).has(fragment);
      });
      expect(broken).toEqual([]);
    });
  }
});
