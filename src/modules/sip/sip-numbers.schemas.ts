import { Type, type Static } from 'typebox';
import { DateTime, Name, Uuid } from '../../http/schemas.ts';

export const SipNumber = Type.Object(
  {
    id: Uuid,
    organizationId: Uuid,
    number: Type.String({ description: 'E.164', examples: ['+4930123456'] }),
    sipCredentialId: Uuid,
    name: Type.String(),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'SipNumber' },
);
export type SipNumber = Static<typeof SipNumber>;

export const SipNumberWrite = Type.Object(
  {
    number: Type.String({
      minLength: 1,
      maxLength: 40,
      description: 'E.164 with the leading +; spaces, dashes, dots and brackets are removed. Unique in the organization.',
      examples: ['+49 30 123456'],
    }),
    sipCredentialId: Type.String({ ...Uuid, description: 'SIP credentials of the same organization that carry this number' }),
    name: Type.Optional(Type.String({ ...Name, description: 'Defaults to the number' })),
  },
  {
    additionalProperties: false,
    title: 'SipNumberCreate',
    examples: [{ number: '+49 30 123456', sipCredentialId: '0b6f1c1e-7a55-4f0e-9a34-2f1e4c3b9d10', name: 'Berlin front desk' }],
  },
);
export type SipNumberWrite = Static<typeof SipNumberWrite>;

export const SipNumberParams = Type.Object({ vendorId: Uuid, organizationId: Uuid, sipNumberId: Uuid });
