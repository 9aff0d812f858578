import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configTable } from '../../core/config.ts';
import { generatedPart } from '../../scripts/docs/generated.ts';

const readme = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');

describe('README.md', () => {
  it('lists every setting as core/config.ts defines it (run npm run docs after changing one)', () => {
    expect(generatedPart(readme, 'config')).toBe(configTable());
  });

  it('stays within 300 lines: the rest belongs in OPERATING.md, api/REFERENCE.md or CONTRIBUTING.md', () => {
    expect(readme.split('\n').length - 1).toBeLessThanOrEqual(300);
  });
});
