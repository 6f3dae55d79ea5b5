import { Type } from 'typebox';

/** The ids Parley issues: the same test as the `uuid` format the schemas validate with. */
export const isUuid = (value: string): boolean => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);

export const Uuid = Type.String({ format: 'uuid', examples: ['0b6f1c1e-7a55-4f0e-9a34-2f1e4c3b9d10'] });
export const DateTime = Type.String({ format: 'date-time' });
export const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', examples: ['Front desk'] });

export const VendorParams = Type.Object({ vendorId: Uuid });
export const OrgParams = Type.Object({ vendorId: Uuid, organizationId: Uuid });

export const orgPath = (p: { vendorId: string; organizationId: string }) =>
  `/api/v1/vendors/${p.vendorId}/organizations/${p.organizationId}`;
