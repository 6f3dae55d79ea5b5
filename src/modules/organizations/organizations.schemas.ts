import { Type, type Static } from 'typebox';
import { DateTime, Name, Uuid } from '../../http/schemas.ts';

export const Organization = Type.Object(
  { id: Uuid, vendorId: Uuid, name: Name, createdAt: DateTime, updatedAt: DateTime },
  { title: 'Organization' },
);
export type Organization = Static<typeof Organization>;

export const OrganizationWrite = Type.Object({ name: Name }, { additionalProperties: false, title: 'OrganizationCreate' });
export type OrganizationWrite = Static<typeof OrganizationWrite>;
