import { Type, type Static } from 'typebox';
import { DateTime, Name, Uuid } from '../../http/schemas.ts';

export const SIP_TRANSPORTS = ['udp', 'tcp', 'tls'] as const;
export type SipTransportName = (typeof SIP_TRANSPORTS)[number];

const Hostname = Type.String({
  minLength: 1,
  maxLength: 255,
  description: 'Host name or IP address of the SIP server (registrar), without scheme or port',
  examples: ['sip.example.com'],
});
const Port = Type.Integer({ minimum: 1, maximum: 65535, description: 'Default 5060 (5061 with tls)', examples: [5060] });
const Transport = Type.Unsafe<SipTransportName>(Type.String({ enum: [...SIP_TRANSPORTS], description: 'Default udp' }));
// Control characters would corrupt the SIP headers these travel in.
const Username = Type.String({ minLength: 1, maxLength: 128, pattern: '^[^\\u0000-\\u001f\\u007f]+$', description: 'SIP account user name' });
const passwordRules = { minLength: 1, maxLength: 256, pattern: '^[^\\r\\n\\u0000]+$' };
const Password = Type.String({ ...passwordRules, description: 'SIP account password; write-only' });
const MaxAgentTasks = Type.Integer({ minimum: 1, maximum: 10_000, description: 'Most agent tasks these credentials run at once; default 1' });

/** POST …/sip/credentials/validate: the interface's SIP credentials, plus `transport`. Nothing is stored. */
export const SipCredentialsCheck = Type.Object(
  {
    hostname: Hostname,
    port: Type.Optional(Port),
    transport: Type.Optional(Transport),
    username: Username,
    password: Password,
    maxAgentTasks: Type.Optional(MaxAgentTasks),
  },
  {
    additionalProperties: false,
    title: 'SipCredentials',
    examples: [{ hostname: 'sip.example.com', port: 5060, username: 'parley-trunk', password: 'correct horse battery staple', maxAgentTasks: 2 }],
  },
);
export type SipCredentialsCheck = Static<typeof SipCredentialsCheck>;

export const SipValidationResult = Type.Object(
  {
    successful: Type.Boolean({ description: 'true when the registrar accepted the REGISTER' }),
    statusCode: Type.Union([Type.Integer(), Type.Null()], { description: 'Final SIP status; null on timeout, refused connection or an unresolvable host' }),
    reason: Type.String({ description: 'SIP reason phrase, or what went wrong before any answer (for example "timeout")' }),
  },
  { title: 'SipValidationResult' },
);

export const SipCredential = Type.Object(
  {
    id: Uuid,
    organizationId: Uuid,
    name: Type.String(),
    hostname: Type.String(),
    port: Type.Integer(),
    transport: Transport,
    username: Type.String(),
    maxAgentTasks: Type.Integer(),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'SipCredential', description: 'The password is write-only and never returned.' },
);
export type SipCredential = Static<typeof SipCredential>;

const writeFields = {
  name: Name,
  hostname: Hostname,
  port: Type.Optional(Port),
  transport: Type.Optional(Transport),
  username: Username,
  maxAgentTasks: Type.Optional(MaxAgentTasks),
};

export const SipCredentialCreate = Type.Object(
  { ...writeFields, password: Password },
  {
    additionalProperties: false,
    title: 'SipCredentialCreate',
    examples: [{ name: 'Main trunk', hostname: 'sip.example.com', port: 5060, transport: 'udp', username: 'parley-trunk', password: 'correct horse battery staple', maxAgentTasks: 2 }],
  },
);
export type SipCredentialCreate = Static<typeof SipCredentialCreate>;

export const SipCredentialUpdate = Type.Object(
  { ...writeFields, password: Type.Optional(Type.String({ ...passwordRules, description: 'Left out (or ********): the stored password is kept' })) },
  { additionalProperties: false, title: 'SipCredentialUpdate' },
);
export type SipCredentialUpdate = Static<typeof SipCredentialUpdate>;

export const SipCredentialParams = Type.Object({ vendorId: Uuid, organizationId: Uuid, sipCredentialId: Uuid });
