import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import { Envelope, envelope, responses } from '../../http/envelope.ts';
import { unauthorized } from '../../http/errors.ts';
import { Uuid } from '../../http/schemas.ts';
import { ALL_PERMISSIONS, ROLE_NAMES } from './permissions.ts';

const Me = Type.Object(
  {
    kind: Type.String({ enum: ['admin', 'token'], description: 'admin: the platform admin token; token: an API token' }),
    tokenId: Type.Union([Uuid, Type.Null()], { description: 'null for the platform admin' }),
    vendorId: Type.Union([Uuid, Type.Null()], { description: 'The vendor the token belongs to; null for the platform admin, who sees every vendor' }),
    organizationId: Type.Union([Uuid, Type.Null()], { description: 'Set when the token is narrowed to one organization' }),
    role: Type.Union([Type.String({ enum: ROLE_NAMES }), Type.Null()], { description: 'The role the token was made with; null for an explicit permission list and for the platform admin' }),
    permissions: Type.Array(Type.String({ enum: [...ALL_PERMISSIONS] }), { description: 'What the token may do within its scope (the platform admin: everything)' }),
  },
  { title: 'Me' },
);
type Me = Static<typeof Me>;

/**
 * GET /api/v1/me: who the calling token is, so a client (the console) knows where it may go
 * without probing routes for 403s. Any valid token may ask about itself.
 */
export const meRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { kysely } = app.ctx.db;
  app.get('/api/v1/me', {
    config: { auth: { scope: 'token' } },
    schema: { tags: ['API tokens'], operationId: 'getMe', summary: 'Who the calling token is: kind, scope, role and permissions', response: responses(200, Envelope(Me)) },
  }, async (request) => {
    const principal = request.principal;
    if (!principal) throw unauthorized();
    if (principal.kind === 'admin') {
      const admin: Me = { kind: 'admin', tokenId: null, vendorId: null, organizationId: null, role: null, permissions: [...ALL_PERMISSIONS] };
      return envelope(request, admin);
    }
    // The principal is cached without the role (authorization never needs it), so read it here.
    const row = await kysely.selectFrom('api_tokens').select('role').where('id', '=', principal.tokenId).executeTakeFirst();
    const me: Me = {
      kind: 'token',
      tokenId: principal.tokenId,
      vendorId: principal.vendorId,
      organizationId: principal.organizationId,
      role: row?.role ?? null,
      permissions: ALL_PERMISSIONS.filter((p) => principal.permissions.has(p)),
    };
    return envelope(request, me);
  });
};
