#!/usr/bin/env node
// The `afterimage` command: TypeScript sources run as they are, compiled on the fly by tsx.
import { register } from 'tsx/esm/api';

register();
await import('./afterimage.ts');
