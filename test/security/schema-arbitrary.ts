import fc from 'fast-check';

/** A JSON Schema, as the OpenAPI document serves it. */
export type Schema = Record<string, any>;

const HOSTILE_STRINGS = [
  '', ' ', '\u0000', '../../etc/passwd', "' OR 1=1 --", '<script>alert(1)</script>', '${jndi:ldap://x}',
  '🦜'.repeat(50), '\u202e\u0646\u0635', 'x'.repeat(100_000), '%00', '\r\nX-Injected: 1', '__proto__', 'constructor',
];

/** Values that fit the schema (as far as a generator reasonably can). */
export function valid(schema: Schema | undefined, known: Record<string, string[]>, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return fc.constant(null);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const variants = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (variants) return fc.oneof(...variants.map((s) => valid(s, known, depth + 1)));
  switch (schema.type) {
    case 'string': {
      if (schema.format === 'uuid') return fc.oneof(fc.constantFrom(...(known.ids ?? [crypto.randomUUID()])), fc.uuid());
      if (schema.format === 'date-time') return fc.date({ min: new Date('2020-01-01'), max: new Date('2040-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
      if (Array.isArray(schema.examples) && schema.examples.length && fc.sample(fc.boolean(), 1)[0]) return fc.constantFrom(...(schema.examples as string[]));
      const lengths = { minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 40, 40) };
      if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern as string)).filter((s) => s.length >= lengths.minLength && s.length <= (schema.maxLength ?? 1e9));
      return fc.string(lengths);
    }
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1000, max: schema.maximum ?? 100_000 });
    case 'number':
      return fc.double({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1000, noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(valid(schema.items as Schema, known, depth + 1), { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 3, 3) });
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const required = new Set((schema.required ?? []) as string[]);
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, prop] of Object.entries(properties)) record[name] = valid(prop, known, depth + 1);
      const base = fc.record(record, { requiredKeys: [...required].filter((k) => k in record) });
      if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
        return fc.tuple(base, fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), valid(schema.additionalProperties as Schema, known, depth + 1), { maxKeys: 3 }))
          .map(([a, b]) => ({ ...b, ...a }));
      }
      return base;
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function deep(levels: number): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < levels; i++) value = { nested: value };
  return value;
}

/** Almost valid and hostile variants of a valid value. */
export function mutate(value: unknown): fc.Arbitrary<unknown> {
  const hostile = fc.oneof(
    fc.constantFrom(...HOSTILE_STRINGS),
    fc.constantFrom(-1, 0, 1e308, -1e308, 2 ** 53 + 1, 0.5, true, false, null, [], {}),
    fc.constant(deep(300)),
    fc.string({ unit: 'grapheme', maxLength: 30 }),
  );
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return fc.oneof(hostile, fc.constant(value));
  const keys = Object.keys(value);
  return fc.oneof(
    // a field with a wrong or hostile value
    keys.length ? fc.tuple(fc.constantFrom(...keys), hostile).map(([k, v]) => ({ ...value, [k]: v })) : hostile,
    // a required field dropped
    keys.length ? fc.constantFrom(...keys).map((k) => Object.fromEntries(Object.entries(value).filter(([key]) => key !== k))) : hostile,
    // an unknown or prototype-polluting field
    fc.tuple(fc.constantFrom('__proto__', 'constructor', 'prototype', 'isAdmin', 'organizationId', 'id'), hostile)
      .map(([k, v]) => JSON.parse(JSON.stringify(value).replace(/^\{/, `{${JSON.stringify(k)}:${JSON.stringify(v) ?? 'null'}${keys.length ? ',' : ''}`)) as unknown),
    hostile,
  );
}
