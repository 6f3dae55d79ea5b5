import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { MASK } from '../../crypto/secret-box.ts';
import { bumpCounter, readCounter } from '../../db/counters.ts';
import { EmptyEnvelope, Envelope, PageEnvelope, envelope, responses, sendCreated } from '../../http/envelope.ts';
import { badRequest, conflict, notFound } from '../../http/errors.ts';
import { BASE_SORT, fetchPage, listQuery, pageBody } from '../../http/pagination.ts';
import { OrgParams, orgPath } from '../../http/schemas.ts';
import { findSipCredential, sipCredentialCounter, sipCredentialsQuery, toSipCredential } from './sip-credentials.repository.ts';
import {
  SipCredential, SipCredentialCreate, SipCredentialParams, SipCredentialUpdate, SipCredentialsCheck, SipValidationResult, type SipTransportName,
} from './sip-credentials.schemas.ts';
import { assertHostname, portOf, validateSipTarget } from './sip-validate.ts';

const tags = ['SIP credentials'];
const BASE = '/sip/credentials';
const read = { auth: { scope: 'organization', permission: 'sip:read' } } as const;
const write = { auth: { scope: 'organization', permission: 'sip:write' } } as const;
const NOT_FOUND = 'SIP credentials';
const VALIDATE_DESCRIPTION =
  'Sends one SIP REGISTER with digest authentication to the server, then an un-REGISTER (Expires: 0) so no binding ' +
  'is left. Answers within 10 s. `statusCode` is the final SIP status, or null on timeout or when the server cannot ' +
  'be reached. A server address refused by the egress policy is a 400 on `hostname`, and nothing is sent.';

export interface SipCredentialRouteOptions {
  /** Credentials were stored, changed or deleted: registrations follow (the process's telephony, when it has one). */
  changed?: () => void;
}

export const sipCredentialRoutes: FastifyPluginAsyncTypebox<SipCredentialRouteOptions> = async (app, { changed = () => {} }) => {
  const { kysely } = app.ctx.db;
  const { secrets, egress } = app.ctx;
  const now = () => app.ctx.clock.now().toISOString();
  const noRegistration = { registration_owner: null, registration_lease_expires_at: null, registration_state: null, registration_last_status_code: null, registration_expires_at: null };

  app.post(`${BASE}/validate`, {
    config: write,
    schema: {
      tags, summary: 'Validate SIP credentials (registers once; stores nothing)', description: VALIDATE_DESCRIPTION,
      params: OrgParams, body: SipCredentialsCheck, response: responses(200, Envelope(SipValidationResult)),
    },
  }, async (request) => {
    const result = await validateSipTarget(request.body, { allow: egress.allow, log: request.log });
    return envelope(request, result);
  });

  app.post(BASE, {
    config: { ...write, idempotent: true },
    schema: { tags, summary: 'Store SIP credentials', params: OrgParams, body: SipCredentialCreate, response: responses(201, Envelope(SipCredential)) },
  }, async (request, reply) => {
    const { organizationId } = request.params;
    const body = request.body;
    assertHostname(body.hostname);
    const at = now();
    const row = {
      id: crypto.randomUUID(),
      organization_id: organizationId,
      name: body.name,
      hostname: body.hostname,
      port: portOf(body),
      transport: body.transport ?? 'udp',
      username: body.username,
      password_sealed: secrets.seal(body.password),
      max_agent_tasks: body.maxAgentTasks ?? 1,
      register: body.register ? 1 : 0,
      created_at: at,
      updated_at: at,
    };
    await kysely.transaction().execute(async (trx) => {
      await trx.insertInto('sip_credentials').values(row).execute();
      await bumpCounter(trx, sipCredentialCounter(organizationId), 1);
    });
    changed();
    return sendCreated(request, reply, `${orgPath(request.params)}/sip/credentials/${row.id}`, toSipCredential({ ...row, ...noRegistration }, app.ctx.clock.now()));
  });

  app.get(BASE, {
    config: read,
    schema: { tags, summary: 'List SIP credentials', params: OrgParams, querystring: listQuery(BASE_SORT), response: responses(200, PageEnvelope(SipCredential)) },
  }, async (request) => {
    const { organizationId } = request.params;
    const page = await fetchPage(sipCredentialsQuery(kysely, organizationId), request.query, BASE_SORT, () => readCounter(kysely, sipCredentialCounter(organizationId)), { table: 'sip_credentials' });
    const at = app.ctx.clock.now();
    return pageBody(request, { ...page, items: page.items.map((row) => toSipCredential(row, at)) });
  });

  app.get(`${BASE}/:sipCredentialId`, {
    config: read,
    schema: { tags, summary: 'Get SIP credentials (without the password)', params: SipCredentialParams, response: responses(200, Envelope(SipCredential)) },
  }, async (request) => {
    const row = await sipCredentialsQuery(kysely, request.params.organizationId).where('sip_credentials.id', '=', request.params.sipCredentialId).executeTakeFirst();
    if (!row) throw notFound(NOT_FOUND);
    return envelope(request, toSipCredential(row, app.ctx.clock.now()));
  });

  app.put(`${BASE}/:sipCredentialId`, {
    config: write,
    schema: {
      tags, summary: 'Replace SIP credentials', description: 'A body without `password` (or with ********) keeps the stored password.',
      params: SipCredentialParams, body: SipCredentialUpdate, response: responses(200, EmptyEnvelope),
    },
  }, async (request) => {
    const { organizationId, sipCredentialId } = request.params;
    const body = request.body;
    assertHostname(body.hostname);
    const keepPassword = body.password === undefined || body.password === MASK;
    if (keepPassword) {
      // The stored password only ever goes to the server it was given for: a new host, port or
      // transport needs it again (else an editor could point the digest at a server of their own).
      const stored = await findSipCredential(kysely, organizationId, sipCredentialId);
      if (!stored) throw notFound(NOT_FOUND);
      const moved = stored.hostname !== body.hostname || stored.port !== portOf(body) || stored.transport !== (body.transport ?? 'udp');
      if (moved) throw badRequest('Send the password again', [{ path: 'password', message: 'must be sent again: hostname, port or transport changed, and a kept password never follows a new server' }]);
    }
    const result = await kysely
      .updateTable('sip_credentials')
      .set({
        name: body.name,
        hostname: body.hostname,
        port: portOf(body),
        transport: body.transport ?? 'udp',
        username: body.username,
        ...(keepPassword ? {} : { password_sealed: secrets.seal(body.password as string) }),
        max_agent_tasks: body.maxAgentTasks ?? 1,
        register: body.register ? 1 : 0,
        updated_at: now(),
      })
      .where('organization_id', '=', organizationId)
      .where('id', '=', sipCredentialId)
      .executeTakeFirst();
    if (!result.numUpdatedRows) throw notFound(NOT_FOUND);
    changed();
    return envelope(request, null, 'Updated');
  });

  app.delete(`${BASE}/:sipCredentialId`, {
    config: write,
    schema: {
      tags, summary: 'Delete SIP credentials (409 while a SIP number uses them)',
      params: SipCredentialParams, response: responses(200, EmptyEnvelope, [409]),
    },
  }, async (request) => {
    const { organizationId, sipCredentialId } = request.params;
    await kysely.transaction().execute(async (trx) => {
      if (!(await findSipCredential(trx, organizationId, sipCredentialId))) throw notFound(NOT_FOUND);
      const user = await trx.selectFrom('sip_numbers').select(['number']).where('sip_credential_id', '=', sipCredentialId).executeTakeFirst();
      if (user) throw conflict(`The SIP number ${user.number} uses these credentials`);
      await trx.deleteFrom('sip_credentials').where('id', '=', sipCredentialId).execute();
      await bumpCounter(trx, sipCredentialCounter(organizationId), -1);
    });
    changed();
    return envelope(request, null, 'Deleted');
  });

  app.post(`${BASE}/:sipCredentialId/validate`, {
    config: write,
    schema: {
      tags, summary: 'Validate stored SIP credentials', description: `${VALIDATE_DESCRIPTION} Takes no body.`,
      params: SipCredentialParams, response: responses(200, Envelope(SipValidationResult)),
    },
  }, async (request) => {
    const row = await findSipCredential(kysely, request.params.organizationId, request.params.sipCredentialId);
    if (!row) throw notFound(NOT_FOUND);
    const target = {
      hostname: row.hostname,
      port: row.port,
      transport: row.transport as SipTransportName,
      username: row.username,
      password: secrets.open(row.password_sealed),
    };
    return envelope(request, await validateSipTarget(target, { allow: egress.allow, log: request.log }));
  });
};
