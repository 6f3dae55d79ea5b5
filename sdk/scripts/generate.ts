/**
 * Builds the service in-process on an in-memory SQLite database, takes its OpenAPI document and
 * writes what the SDK is compiled from (none of it committed):
 * - openapi.json, the document itself (shipped in the package);
 * - src/generated/schema.ts, its types, by openapi-typescript;
 * - src/generated/operations.ts, each operationId's method and path, and whether it takes an
 *   Idempotency-Key, and whether it answers JSON (the runtime table the operations go through).
 * When a route changes shape, the SDK and everything compiled against it (CLI, console) follow.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import pino from 'pino';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createContext } from '../../src/context.ts';

interface Operation {
  operationId?: string;
  parameters?: { in: string; name: string }[];
  responses?: Record<string, { content?: Record<string, unknown> }>;
}
type Document = Parameters<typeof openapiTS>[0] & { paths: Record<string, Record<string, Operation>> };

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
const HEADER = '// Generated from the service\'s OpenAPI document by sdk/scripts/generate.ts. Do not edit.\n';
const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

function operationTable(document: Document): string {
  const rows: string[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      if (!operation.operationId) throw new Error(`${method.toUpperCase()} ${path} has no operationId`);
      const idempotent = (operation.parameters ?? []).some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key');
      const success = operation.responses?.['200'] ?? operation.responses?.['201'];
      const json = success?.content?.['application/json'] !== undefined;
      rows.push(`  ${operation.operationId}: { method: '${method}', path: '${path}', idempotent: ${idempotent}, json: ${json} },`);
    }
  }
  rows.sort();
  return `${HEADER}export const OPERATIONS = {\n${rows.join('\n')}\n} as const;\n`;
}

// An explicit environment: nothing of the caller's (DATABASE_URL, keys) reaches this throwaway app.
const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent', PARLEY_SCHEDULER: 'off', PARLEY_DIALER: 'none' });
const ctx = createContext(config, { log: pino({ level: 'silent' }) });
try {
  // No runJobs: the runner never starts, so nothing runs beside reading the route table.
  const app = await buildApp(ctx, { announceAdminToken: () => {} });
  try {
    await app.ready();
    const document = app.swagger() as Document;
    mkdirSync(here('../src/generated'), { recursive: true });
    writeFileSync(here('../openapi.json'), `${JSON.stringify(document, null, 2)}\n`);
    const ast = await openapiTS(document, { alphabetize: true });
    writeFileSync(here('../src/generated/schema.ts'), HEADER + astToString(ast));
    writeFileSync(here('../src/generated/operations.ts'), operationTable(document));
    process.stdout.write(`wrote sdk/openapi.json and sdk/src/generated/ (${Object.keys(document.paths).length} paths)\n`);
  } finally {
    await app.close();
  }
} finally {
  await ctx.close();
}
