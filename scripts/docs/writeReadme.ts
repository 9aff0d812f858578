// `npm run docs`: rewrites the generated parts of README.md (the configuration table) from their sources.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configTable } from '../../core/config.ts';
import { replaceGenerated } from './generated.ts';

const readme = join(import.meta.dirname, '..', '..', 'README.md');
writeFileSync(readme, replaceGenerated(readFileSync(readme, 'utf8'), 'config', configTable()));
console.log('README.md: configuration table written from core/config.ts');
