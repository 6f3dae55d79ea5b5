import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

// ajv-formats is CommonJS with a default export; under NodeNext it arrives wrapped.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const base: Options = {
  allErrors: true,
  // Unknown fields are an error, never silently dropped (no mass assignment by stealth).
  removeAdditional: false,
  useDefaults: true,
  strict: false,
  // Extensions are one schema per type (oneOf with a discriminator): only the named type's
  // mistakes are reported, and an unknown type is one clear error.
  discriminator: true,
  // Errors carry their schema, so an unknown discriminator value can be answered with the known ones.
  verbose: true,
};

function makeAjv(coerceTypes: Options['coerceTypes']): Ajv {
  const ajv = new Ajv({ ...base, coerceTypes });
  addFormats(ajv);
  ajv.addKeyword({ keyword: 'example' });
  return ajv;
}

/**
 * Bodies are validated without type coercion ("5" is not an integer); query strings, path
 * parameters and headers arrive as text, so they are coerced (and a lone `sort` becomes a list).
 */
export function registerValidation(app: FastifyInstance): void {
  const bodyAjv = makeAjv(false);
  const textAjv = makeAjv('array');
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? bodyAjv : textAjv).compile(schema),
  );
}

/** Meta-validates the JSON Schema inside tool specifications (one per app: Ajv keeps caches). */
export function createToolSpecAjv(): Ajv {
  return new Ajv({ strict: false, allErrors: true });
}
