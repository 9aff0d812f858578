#!/usr/bin/env node
// The `afterimage` command. It runs the bundle scripts/build.mjs makes of the TypeScript sources, built
// again first when one changed; where it cannot be written (a read-only install), the sources through tsx.
import { builtEntry } from './build.mjs';

// Stack traces name the TypeScript sources, as they did under tsx.
process.setSourceMapsEnabled(true);
const { runAfterimage } = await loadCommand();
// Not awaited, as before: a command that ends by letting the event loop drain must not leave a top-level await unsettled (exit 13).
void runAfterimage(process.argv.slice(2));

async function loadCommand() {
  const entry = await builtEntry();
  if (entry) return import(entry);
  const { register } = await import('tsx/esm/api');
  register();
  return import('./afterimage.ts');
}
