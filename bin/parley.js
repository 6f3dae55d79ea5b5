#!/usr/bin/env node
// The built service (`npm run build`, which `npm start` runs first). During development,
// `npm run dev -- <command>` runs the TypeScript sources directly instead.
import { existsSync } from 'node:fs';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write('parley: dist/ is missing; build it first with `npm run build` (npm start does it for you)\n');
  process.exit(1);
}
await import(cli.href);
