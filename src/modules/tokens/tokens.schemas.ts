import { Type, type Static } from 'typebox';
import { DateTime, Name, Uuid } from '../../http/schemas.ts';
import { ALL_PERMISSIONS, ROLE_NAMES } from './permissions.ts';

const PermissionName = Type.String({ enum: [...ALL_PERMISSIONS] });
const RoleName = Type.String({ enum: ROLE_NAMES, description: 'viewer: all :read; editor: all but organizations/tokens write; admin: all' });

export const ApiToken = Type.Object(
  {
    id: Uuid,
    vendorId: Uuid,
    organizationId: Type.Union([Uuid, Type.Null()]),
    name: Name,
    role: Type.Union([RoleName, Type.Null()]),
    permissions: Type.Array(PermissionName),
    prefix: Type.String({ description: 'The public start of the token, to recognise it; the secret is never shown again' }),
    createdAt: DateTime,
    updatedAt: DateTime,
    expiresAt: Type.Union([DateTime, Type.Null()]),
    revokedAt: Type.Union([DateTime, Type.Null()]),
  },
  { title: 'ApiToken' },
);
export type ApiToken = Static<typeof ApiToken>;

export const CreatedApiToken = Type.Intersect(
  [ApiToken, Type.Object({ token: Type.String({ description: 'The token value, shown only in this response' }) })],
  { title: 'CreatedApiToken' },
);

export const ApiTokenCreate = Type.Object(
  {
    name: Name,
    role: Type.Optional(RoleName),
    permissions: Type.Optional(Type.Array(PermissionName, { minItems: 1, uniqueItems: true })),
    organizationId: Type.Optional(Type.Union([Uuid, Type.Null()], { description: 'Narrow the token to one organization' })),
    expiresAt: Type.Optional(Type.Union([DateTime, Type.Null()])),
  },
  { additionalProperties: false, title: 'ApiTokenCreate' },
);
export type ApiTokenCreate = Static<typeof ApiTokenCreate>;

export const TokenParams = Type.Object({ vendorId: Uuid, tokenId: Uuid });
