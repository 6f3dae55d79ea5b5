import type { Ajv } from 'ajv';
import type { ErrorDetail } from '../../http/errors.ts';

export const PROPERTY_TYPES = ['string', 'integer', 'number', 'boolean', 'object', 'array'] as const;
const MAX_SCHEMA_CHARS = 64 * 1024;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Checks the `schema` string of a tool_webhook: a function-calling tool spec whose name is the
 * tool's name, whose parameters are an object schema with supported property types, and whose
 * `required` names only existing properties, and which is a valid JSON Schema (Ajv's meta-schema).
 * Every problem names the field and says what is wrong.
 */
export function toolSchemaProblems(schema: unknown, toolName: unknown, path: string, ajv: Ajv): ErrorDetail[] {
  if (typeof schema !== 'string') return [{ path, message: 'must be a JSON string of the tool specification' }];
  if (schema.length > MAX_SCHEMA_CHARS) return [{ path, message: `must be at most ${MAX_SCHEMA_CHARS} characters` }];
  let spec: unknown;
  try {
    spec = JSON.parse(schema);
  } catch (error) {
    return [{ path, message: `is not valid JSON (${(error as Error).message})` }];
  }
  if (!isObject(spec)) return [{ path, message: 'must be a JSON object with name, description and parameters' }];
  const problems: ErrorDetail[] = [];
  const say = (message: string) => problems.push({ path, message });
  for (const key of Object.keys(spec)) {
    if (!['name', 'description', 'parameters', 'strict'].includes(key)) say(`has an unknown key "${key}"`);
  }
  if (typeof spec.name !== 'string') say('needs a "name" string');
  else if (spec.name !== toolName) say(`"name" is "${spec.name}" but parameters.name is "${String(toolName)}"; they must be equal`);
  if (spec.description !== undefined && typeof spec.description !== 'string') say('"description" must be a string');
  const parameters = spec.parameters;
  if (!isObject(parameters)) {
    say('needs a "parameters" object');
    return problems;
  }
  if (parameters.type !== 'object') say('"parameters.type" must be "object"');
  // The whole parameters object must be a valid JSON Schema: nested mistakes (items: "oops") included.
  if (!ajv.validateSchema(parameters)) {
    for (const e of (ajv.errors ?? []).slice(0, 5)) say(`"parameters${e.instancePath.replaceAll('/', '.')}" ${e.message ?? 'is not valid JSON Schema'}`);
  }
  const properties = parameters.properties ?? {};
  if (!isObject(properties)) {
    say('"parameters.properties" must be an object');
    return problems;
  }
  for (const [name, property] of Object.entries(properties)) {
    if (!isObject(property)) {
      say(`property "${name}" must be an object with a type`);
    } else if (!PROPERTY_TYPES.includes(property.type as (typeof PROPERTY_TYPES)[number])) {
      say(`property "${name}" has type ${JSON.stringify(property.type)}; supported: ${PROPERTY_TYPES.join(', ')}`);
    } else if (property.description !== undefined && typeof property.description !== 'string') {
      say(`property "${name}" has a description that is not a string`);
    }
  }
  const required = parameters.required ?? [];
  if (!Array.isArray(required) || required.some((r) => typeof r !== 'string')) {
    say('"parameters.required" must be an array of property names');
  } else {
    for (const name of required as string[]) {
      if (!Object.hasOwn(properties, name)) say(`"parameters.required" names "${name}", which is not a property`);
    }
  }
  return problems;
}
