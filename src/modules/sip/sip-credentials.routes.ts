import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { EmptyEnvelope, Envelope, PageEnvelope, envelope, responses, sendCreated } from '../../http/envelope.ts';
import { BASE_SORT, listQuery, pageBody } from '../../http/pagination.ts';
import { OrgParams, orgPath } from '../../http/schemas.ts';
import { updateRoutes } from '../../http/updates.ts';
import { listSipCredentials } from './sip-credentials.repository.ts';
import {
  SipCredential, SipCredentialCreate, SipCredentialParams, SipCredentialUpdate, SipCredentialsCheck, SipValidationResult,
} from './sip-credentials.schemas.ts';
import {
  createSipCredential, deleteSipCredential, getSipCredential, updateSipCredential, validateStoredSipCredential,
} from './sip-credentials.service.ts';
import { validateSipTarget } from './sip-validate.ts';

const tags = ['SIP credentials'];
const BASE = '/sip/credentials';
const ITEM = `${BASE}/:sipCredentialId`;
const read = { auth: { scope: 'organization', permission: 'sip:read' } } as const;
const write = { auth: { scope: 'organization', permission: 'sip:write' } } as const;
const VALIDATE_DESCRIPTION =
  'Sends one SIP REGISTER with digest authentication to the server, then an un-REGISTER (Expires: 0) so no binding ' +
  'is left. Answers within 10 s. `statusCode` is the final SIP status, or null on timeout or when the server cannot ' +
  'be reached. A server address refused by the egress policy is a 400 on `hostname`, and nothing is sent.';

export interface SipCredentialRouteOptions {
  /** Told after credentials were stored, changed or deleted (the process's trunk registrations follow at once). */
  changed?: () => void;
}

export const sipCredentialRoutes: FastifyPluginAsyncTypebox<SipCredentialRouteOptions> = async (app, opts) => {
  const { ctx } = app;
  const changed = () => opts.changed?.();

  app.post(`${BASE}/validate`, {
    config: write,
    schema: {
      tags, operationId: 'validateSipCredentials', summary: 'Validate SIP credentials (registers once; stores nothing)', description: VALIDATE_DESCRIPTION,
      params: OrgParams, body: SipCredentialsCheck, response: responses(200, Envelope(SipValidationResult)),
    },
  }, async (request) => envelope(request, await validateSipTarget(request.body, { allow: ctx.egress.allow, log: request.log })));

  app.post(BASE, {
    config: { ...write, idempotent: true },
    schema: { tags, operationId: 'createSipCredential', summary: 'Store SIP credentials', params: OrgParams, body: SipCredentialCreate, response: responses(201, Envelope(SipCredential)) },
  }, async (request, reply) => {
    const credential = await createSipCredential(ctx, request.params.organizationId, request.body);
    changed();
    return sendCreated(request, reply, `${orgPath(request.params)}${BASE}/${credential.id}`, credential);
  });

  app.get(BASE, {
    config: read,
    schema: { tags, operationId: 'listSipCredentials', summary: 'List SIP credentials', params: OrgParams, querystring: listQuery(BASE_SORT), response: responses(200, PageEnvelope(SipCredential)) },
  }, async (request) => pageBody(request, await listSipCredentials(ctx.db.kysely, request.params.organizationId, request.query, ctx.clock.now())));

  app.get(ITEM, {
    config: read,
    schema: { tags, operationId: 'getSipCredential', summary: 'Get SIP credentials (without the password)', params: SipCredentialParams, response: responses(200, Envelope(SipCredential)) },
  }, async (request) => envelope(request, await getSipCredential(ctx, request.params.organizationId, request.params.sipCredentialId)));

  updateRoutes(app, {
    resource: 'SipCredential',
    url: ITEM, params: SipCredentialParams, config: write, tags, what: 'SIP credentials', read: SipCredential, write: SipCredentialUpdate,
    description: 'A body without `password` (or with ********) keeps the stored password, unless hostname, port or transport change.',
    update: async ({ params, edit }) => {
      await updateSipCredential(ctx, params.organizationId, params.sipCredentialId, edit);
      changed();
    },
  });

  app.delete(ITEM, {
    config: write,
    schema: {
      tags, operationId: 'deleteSipCredential', summary: 'Delete SIP credentials (409 while a SIP number uses them)',
      params: SipCredentialParams, response: responses(200, EmptyEnvelope, [409]),
    },
  }, async (request) => {
    await deleteSipCredential(ctx, request.params.organizationId, request.params.sipCredentialId);
    changed();
    return envelope(request, null, 'Deleted');
  });

  app.post(`${ITEM}/validate`, {
    config: write,
    schema: {
      tags, operationId: 'validateSipCredential', summary: 'Validate stored SIP credentials', description: `${VALIDATE_DESCRIPTION} Takes no body.`,
      params: SipCredentialParams, response: responses(200, Envelope(SipValidationResult)),
    },
  }, async (request) => envelope(request, await validateStoredSipCredential(ctx, request.log, request.params.organizationId, request.params.sipCredentialId)));
};
