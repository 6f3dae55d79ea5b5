/**
 * Builds the service in-process on an in-memory SQLite database, takes its OpenAPI document
 * and writes the API types the console is compiled against (src/api/schema.d.ts, not
 * committed). When a route changes shape, the console stops compiling: that is the point.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import pino from 'pino';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createContext } from '../../src/context.ts';

interface Doc {
  paths?: Record<string, Record<string, { parameters?: { required?: boolean; schema?: { default?: unknown } }[] }>>;
}

/**
 * List routes declare page, size and sort as required query parameters that have a default
 * (the schema fills them in). For a caller they are optional, so the types say so.
 */
function optionalDefaults(doc: Doc): void {
  for (const item of Object.values(doc.paths ?? {})) {
    for (const operation of Object.values(item)) {
      for (const parameter of operation.parameters ?? []) {
        if (parameter.schema?.default !== undefined) parameter.required = false;
      }
    }
  }
}

const out = fileURLToPath(new URL('../src/api/schema.d.ts', import.meta.url));
// An explicit environment: nothing of the caller's (DATABASE_URL, keys) reaches this throwaway app.
const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent', PARLEY_SCHEDULER: 'off' });
const ctx = createContext(config, { log: pino({ level: 'silent' }) });
try {
  // No runJobs: the runner never starts, so nothing runs beside reading the route table.
  const app = await buildApp(ctx, { announceAdminToken: () => {} });
  try {
    await app.ready();
    const document = app.swagger() as Parameters<typeof openapiTS>[0];
    // Query parameters with a default stay optional for the caller (page, size, sort).
    optionalDefaults(document as unknown as Doc);
    const ast = await openapiTS(document, { alphabetize: true, defaultNonNullable: false });
    writeFileSync(out, `// Generated from the service's OpenAPI document by scripts/gen-api.ts. Do not edit.\n${astToString(ast)}`);
    process.stdout.write(`wrote ${out}\n`);
  } finally {
    await app.close();
  }
} finally {
  await ctx.close();
}
