#!/usr/bin/env node
// The `afterimage` command: TypeScript sources run as they are, compiled on the fly by tsx.
import { register } from 'tsx/esm/api';

register();
const { runAfterimage } = await import('./afterimage.ts');
await runAfterimage(process.argv.slice(2));
