#!/usr/bin/env node
// The `afterimage` command: TypeScript sources run as they are, compiled on the fly by tsx.
import { register } from 'tsx/esm/api';

register();
const { runAfterimage } = await import('./afterimage.ts');
// Not awaited, as before: a command that ends by letting the event loop drain must not leave a top-level await unsettled (exit 13).
void runAfterimage(process.argv.slice(2));
