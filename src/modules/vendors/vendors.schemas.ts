import { Type, type Static } from 'typebox';
import { DateTime, Name, Uuid } from '../../http/schemas.ts';

export const Vendor = Type.Object(
  { id: Uuid, name: Name, createdAt: DateTime, updatedAt: DateTime },
  { title: 'Vendor' },
);
export type Vendor = Static<typeof Vendor>;

export const VendorWrite = Type.Object({ name: Name }, { additionalProperties: false, title: 'VendorCreate' });
export type VendorWrite = Static<typeof VendorWrite>;
