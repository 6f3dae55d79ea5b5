import { isDeepStrictEqual } from 'node:util';
import type { FastifyContextConfig, FastifyInstance, FastifyRequest } from 'fastify';
import jsonMergePatch from 'json-merge-patch';
import { Type, type Static, type TObject, type TSchema } from 'typebox';
import { EmptyEnvelope, envelope, responses } from './envelope.ts';
import { badRequest, validationDetails, type ErrorDetail, type ErrorStatus } from './errors.ts';

/** The media type of a JSON Merge Patch (RFC 7396). PATCH takes it, and application/json too. */
export const MERGE_PATCH = 'application/merge-patch+json';

/**
 * What an update makes of the resource as it is now (its read shape): the PUT body it amounts to.
 * A PUT is its own body (less the read-only fields); a PATCH is the read shape with the patch merged in.
 * Services call it with the row they are about to change, inside their own retry or transaction.
 */
export type Edit<Read, Write> = (current: Read) => Write;

type Fields = Record<string, unknown>;

/** The same value for a read-only field: instants compare as instants, ids whatever their case. */
function sameValue(schema: { format?: string } | undefined, given: unknown, stored: unknown): boolean {
  const format = schema?.format;
  if (typeof given === 'string' && typeof stored === 'string') {
    if (format === 'date-time') return Date.parse(given) === Date.parse(stored);
    if (format === 'uuid') return given.toLowerCase() === stored.toLowerCase();
  }
  return isDeepStrictEqual(given, stored);
}

/** Does the schema take null (a nullable field: `T | null`)? */
function acceptsNull(schema: unknown): boolean {
  const s = schema as { type?: unknown; anyOf?: unknown[] } | undefined;
  return s?.type === 'null' || (Array.isArray(s?.type) && s.type.includes('null')) || (Array.isArray(s?.anyOf) && s.anyOf.some(acceptsNull));
}

/**
 * The patch merged into the current read shape (RFC 7396). A top-level field the patch removes
 * (`null`) that the PUT takes as null becomes null: the read shape always carries such a field
 * (`telephoneNumberId: null` is "no number"), and a PUT leaving it out may mean "keep it".
 */
export function mergePatch(current: Fields, patch: Fields, put: TObject): Fields {
  const merged = jsonMergePatch.apply<Fields>(structuredClone(current), patch);
  for (const [field, value] of Object.entries(patch)) {
    if (value === null && acceptsNull(put.properties[field])) merged[field] = null;
  }
  return merged;
}

/**
 * The body without the read-only fields a GET returned (id, createdAt, organizationId…), so that
 * GET-edit-PUT works: each may be sent back as it was read, and any other value is a 400 naming it.
 */
export function withoutReadOnly(body: Fields, current: Fields, read: TObject, readOnly: readonly string[]): Fields {
  const out = { ...body };
  const problems: ErrorDetail[] = [];
  for (const field of readOnly) {
    if (!(field in out)) continue;
    if (!sameValue(read.properties[field], out[field], current[field])) {
      problems.push({ path: field, message: `is read-only and differs from the stored value ${JSON.stringify(current[field])}; leave it out or send it as a GET returns it` });
    }
    delete out[field];
  }
  if (problems.length) throw badRequest('A read-only field contradicts the resource', problems);
  return out;
}

export interface UpdateRouteOptions<P extends TSchema, R extends TObject, W extends TObject> {
  url: string;
  params: P;
  /** Request headers the update reads (an If-Match), as a schema. */
  headers?: TSchema;
  config: FastifyContextConfig;
  tags: string[];
  /** "an assistant", "SIP credentials"… for the summaries. */
  what: string;
  /** The read shape, as a GET returns it: its fields that `write` lacks are the read-only ones. */
  read: R;
  /** The PUT body. */
  write: W;
  description?: string;
  /**
   * The resource's name in /openapi.json: the operations are update<Resource> (PUT) and
   * patch<Resource> (PATCH), their bodies <Resource>Update and <Resource>Patch.
   */
  resource: string;
  errors?: ErrorStatus[];
  /** `request`: who asks (a versioned resource records its author). */
  update(input: { params: Static<P>; headers: Record<string, unknown>; edit: Edit<Static<R>, Static<W>>; request: FastifyRequest }): Promise<void>;
}

/**
 * PUT and PATCH of one resource, one way for all of them. PUT replaces with its body, which may
 * carry the read-only fields a GET returned (ignored when equal, a 400 when not). PATCH is a JSON
 * Merge Patch: merged into the current read shape, validated with the PUT schema, then applied
 * exactly as that PUT would be (masked secrets kept, and not allowed to follow a new destination).
 */
export function updateRoutes<P extends TSchema, R extends TObject, W extends TObject>(app: FastifyInstance, opts: UpdateRouteOptions<P, R, W>): void {
  const writable = new Set(Object.keys(opts.write.properties));
  const readOnly = Object.keys(opts.read.properties).filter((field) => !writable.has(field));
  const optionalReadOnly = Object.fromEntries(readOnly.map((field) => [field, Type.Optional(opts.read.properties[field] as TSchema)]));
  const title = `${opts.resource}Update`;
  const Put = Type.Object({ ...opts.write.properties, ...optionalReadOnly }, { additionalProperties: false, title });
  const Patch = Type.Object({}, {
    additionalProperties: true,
    title: `${opts.resource}Patch`,
    description: `A JSON Merge Patch (RFC 7396) of the read shape: fields present replace, null removes, nested objects merge, arrays replace. The result must be a valid ${title}.`,
  });
  const response = responses(200, EmptyEnvelope, opts.errors ?? []);
  const common = { tags: opts.tags, params: opts.params, ...(opts.headers ? { headers: opts.headers } : {}), response };
  const update = (request: FastifyRequest, edit: Edit<Static<R>, Static<W>>) =>
    opts.update({ params: request.params as Static<P>, headers: request.headers, edit, request });
  const strip = (body: Fields, current: Static<R>) => withoutReadOnly(body, current, opts.read, readOnly) as Static<W>;

  app.put(opts.url, {
    config: opts.config,
    schema: {
      ...common, summary: `Update ${opts.what}`, body: Put, operationId: `update${opts.resource}`,
      description: [opts.description, `Read-only fields (${readOnly.join(', ')}) may be sent back as a GET returned them; another value is a 400.`].filter(Boolean).join(' '),
    },
  }, async (request) => {
    const body = request.body as Fields;
    await update(request, (current) => strip(body, current));
    return envelope(request, null, 'Updated');
  });

  // The merged document is checked as a PUT body would be, by the same compiled schema.
  const check = app.validatorCompiler?.({ schema: Put, method: 'PATCH', url: opts.url, httpPart: 'body' });
  if (!check) throw new Error('updateRoutes needs the app validator compiler (registerValidation) set first');
  app.patch(opts.url, {
    config: opts.config,
    schema: {
      ...common, summary: `Change ${opts.what} with a JSON Merge Patch`, body: Patch, consumes: [MERGE_PATCH, 'application/json'],
      operationId: `patch${opts.resource}`,
      description: [opts.description, 'Send only what changes (Content-Type: application/merge-patch+json); `null` removes a field.'].filter(Boolean).join(' '),
    },
  }, async (request) => {
    const patch = request.body as Fields;
    await update(request, (current) => {
      const merged = mergePatch(current, patch, Put);
      if (check(merged) !== true) {
        const errors = (check as { errors?: Parameters<typeof validationDetails>[0] | null }).errors ?? [];
        throw badRequest('The patched resource is not valid', validationDetails(errors));
      }
      return strip(merged, current);
    });
    return envelope(request, null, 'Updated');
  });
}
