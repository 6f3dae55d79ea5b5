import { isDeepStrictEqual } from 'node:util';
import type { TSchema } from 'typebox';

/**
 * What makes /openapi.json good input for client generators (docs/api-conventions.md, "The
 * OpenAPI document"): every schema whose `title` reads like a type name becomes a component that
 * operations reference, so a generator emits `Assistant` and `AssistantEnvelope` rather than
 * anonymous types named after a 100-character path; a `oneOf` with a discriminator gets the
 * mapping of each value to its component; a repeatable query parameter is documented as one
 * occurrence of it.
 */
type Node = Record<string, unknown>;

/** A title that names a component: `Assistant`, `AssistantEnvelope`. Other titles stay inline. */
const COMPONENT = /^[A-Z][A-Za-z0-9]*$/;
const REF = '#/components/schemas/';
/** See `documentedAs`. */
const DOCUMENTED = 'x-documented-as';

/**
 * A response schema that serialises by `served` and is documented as `documented` (same static
 * type). For read shapes that are unions: fast-json-stringify picks a `oneOf` branch by validating
 * the value against each, per item, and throws on one that none matches (a row written before a
 * type's schema tightened), where a plain object schema writes any stored item out.
 */
export function documentedAs<T extends TSchema>(served: TSchema, documented: T): T {
  return { ...served, [DOCUMENTED]: documented } as unknown as T;
}

/** Keys whose values are data, not schemas: a `title` inside them means nothing. */
const DATA_KEYS = new Set(['examples', 'example', 'default', 'const', 'enum']);

/** A schema without what only documents it: two uses of one schema may differ there. */
const withoutNotes = ({ description: _d, examples: _e, example: _x, ...schema }: Node): Node => schema;

/** The one value a schema allows (`const`, or a one-value `enum` as the OpenAPI conversion writes it). */
const constantOf = (schema: Node): unknown => (Array.isArray(schema.enum) && schema.enum.length === 1 ? schema.enum[0] : schema.const);

const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && !Array.isArray(value);

class Hoister {
  constructor(private readonly schemas: Node) {}

  /** The schema with every titled part moved to the components; itself a $ref when titled. */
  schema(node: unknown): unknown {
    if (Array.isArray(node)) return node.map((item) => this.schema(item));
    if (!isNode(node)) return node;
    const out = this.parts(node);
    const title = out.title;
    if (typeof title !== 'string' || !COMPONENT.test(title)) return out;
    const known = this.schemas[title];
    if (isNode(known) && !isDeepStrictEqual(withoutNotes(known), withoutNotes(out))) {
      throw new Error(`/openapi.json: two different schemas are titled "${title}": ${JSON.stringify(known)} and ${JSON.stringify(out)}; give one of them another title`);
    }
    // The same schema met twice may have lost its examples once (a request body's go to its media type).
    this.schemas[title] = { ...out, ...(isNode(known) ? known : {}) };
    return { $ref: REF + title };
  }

  /** The schema itself kept, its titled parts moved to the components. */
  parts(served: Node): Node {
    const node = isNode(served[DOCUMENTED]) ? served[DOCUMENTED] : served;
    const out: Node = {};
    for (const [key, value] of Object.entries(node)) out[key] = DATA_KEYS.has(key) ? value : this.schema(value);
    this.map(out);
    return out;
  }

  /** `discriminator.mapping` from each branch's constant, once every branch is a component. */
  private map(schema: Node): void {
    const { discriminator, oneOf } = schema;
    if (!isNode(discriminator) || typeof discriminator.propertyName !== 'string' || !Array.isArray(oneOf)) return;
    const property = discriminator.propertyName;
    const mapping: Record<string, string> = {};
    for (const branch of oneOf as unknown[]) {
      const ref = isNode(branch) && typeof branch.$ref === 'string' ? branch.$ref : null;
      const target = ref ? this.schemas[ref.slice(REF.length)] : undefined;
      const value = isNode(target) && isNode(target.properties) && isNode(target.properties[property]) ? constantOf(target.properties[property]) : undefined;
      if (!ref || typeof value !== 'string') return;
      mapping[value] = ref;
    }
    schema.discriminator = { propertyName: property, mapping };
  }
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];

/**
 * A query parameter that may be repeated (`sort=name,desc&sort=createdAt`) is validated as a list,
 * but documented as one occurrence: its item schema, default and all. OpenAPI's form style sends
 * a repeated parameter the same way, and generators then type `sort` as the string it is.
 */
function oneOccurrence(parameter: Node): void {
  const schema = parameter.schema;
  if (parameter.in !== 'query' || !isNode(schema) || schema.type !== 'array' || !isNode(schema.items)) return;
  const { items } = schema;
  const first = Array.isArray(schema.default) ? (schema.default as unknown[])[0] : undefined;
  parameter.schema = { ...items, ...(first !== undefined ? { default: first } : {}) };
}

/** The document with named components, discriminator mappings and repeatable query parameters as above. */
export function forGenerators<T extends object>(document: T): T {
  const doc = document as Node;
  const components = isNode(doc.components) ? doc.components : {};
  const schemas = isNode(components.schemas) ? components.schemas : {};
  const hoister = new Hoister(schemas);
  for (const [name, schema] of Object.entries(schemas)) if (isNode(schema)) schemas[name] = hoister.parts(schema);
  for (const item of Object.values(isNode(doc.paths) ? doc.paths : {})) {
    if (!isNode(item)) continue;
    for (const method of METHODS) {
      const operation = item[method];
      if (!isNode(operation)) continue;
      for (const parameter of (operation.parameters ?? []) as Node[]) oneOccurrence(parameter);
      for (const holder of [operation.requestBody, ...Object.values(isNode(operation.responses) ? operation.responses : {})]) {
        if (!isNode(holder) || !isNode(holder.content)) continue;
        for (const media of Object.values(holder.content)) {
          if (!isNode(media) || !isNode(media.schema)) continue;
          // A response's description is copied into its schema too; it belongs to the response.
          const { description, ...schema } = media.schema;
          media.schema = hoister.schema(description === holder.description ? schema : media.schema);
        }
      }
    }
  }
  return { ...doc, components: { ...components, schemas: sortedKeys(schemas) } } as T;
}

/** Components in name order, so the document reads (and diffs) the same whatever the route order. */
const sortedKeys = (node: Node): Node => Object.fromEntries(Object.entries(node).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
