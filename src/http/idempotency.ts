import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/database.ts';
import { AppError, badRequest, conflict } from './errors.ts';
import { sendCreated } from './envelope.ts';

const KEY = /^[\x21-\x7e]{1,255}$/;
const TTL_MS = 24 * 60 * 60 * 1000;

/**
 * Runs a POST create at most once per `Idempotency-Key` (per scope, for 24 hours): a repeat
 * with the same body gets the first response again, byte for byte; the same key with another
 * body is a 422; a repeat while the first still runs is a 409. A create that fails keeps no
 * key, so the client can correct the request and retry with the same key.
 */
export async function idempotentCreate(
  db: Db,
  request: FastifyRequest,
  reply: FastifyReply,
  scope: string,
  create: () => Promise<{ location: string; data: unknown }>,
) {
  const header = request.headers['idempotency-key'];
  if (header === undefined) {
    const { location, data } = await create();
    return sendCreated(request, reply, location, data);
  }
  if (typeof header !== 'string' || !KEY.test(header)) {
    throw badRequest('Invalid Idempotency-Key', [{ path: 'Idempotency-Key', message: 'must be 1-255 printable ASCII characters' }]);
  }
  const hash = createHash('sha256').update(`${request.method} ${request.url}\n${JSON.stringify(request.body ?? null)}`).digest('hex');
  const { kysely } = db;
  const now = new Date();
  // A key older than the TTL is forgotten: cleared here rather than by a sweeper.
  await kysely.deleteFrom('idempotency_keys').where('scope', '=', scope).where('key', '=', header)
    .where('created_at', '<', new Date(now.getTime() - TTL_MS).toISOString()).execute();
  const inserted = await kysely
    .insertInto('idempotency_keys')
    .values({ scope, key: header, request_hash: hash, status_code: null, response_body: null, location: null, created_at: now.toISOString() })
    .onConflict((oc) => oc.columns(['scope', 'key']).doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) !== 1) {
    const first = await kysely.selectFrom('idempotency_keys').selectAll().where('scope', '=', scope).where('key', '=', header).executeTakeFirst();
    if (!first) throw conflict('The first request with this Idempotency-Key is still running');
    if (first.request_hash !== hash) throw new AppError(422, 'This Idempotency-Key was used with a different request');
    if (first.status_code === null || first.response_body === null) throw conflict('The first request with this Idempotency-Key is still running');
    reply.code(first.status_code).header('idempotent-replayed', 'true').type('application/json; charset=utf-8');
    if (first.location) reply.header('location', first.location);
    return reply.send(first.response_body);
  }
  try {
    const { location, data } = await create();
    const body = JSON.stringify({ success: true, message: 'Created', data, timestamp: new Date().toISOString(), traceId: request.id });
    await kysely.updateTable('idempotency_keys').set({ status_code: 201, response_body: body, location })
      .where('scope', '=', scope).where('key', '=', header).execute();
    return reply.code(201).header('location', location).type('application/json; charset=utf-8').send(body);
  } catch (error) {
    await kysely.deleteFrom('idempotency_keys').where('scope', '=', scope).where('key', '=', header).execute();
    throw error;
  }
}
