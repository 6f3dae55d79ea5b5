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

const Register = Type.Boolean({
  description: 'Keep a SIP registration up with these credentials (refreshed before it runs out), so the trunk routes calls to ' +
    'their numbers to Parley; default false: calls are then taken from the trunk host without registering',
});

export const REGISTRATION_STATES = ['registering', 'registered', 'failed', 'unregistered'] as const;

export const SipRegistrationStatus = Type.Object(
  {
    state: Type.Unsafe<(typeof REGISTRATION_STATES)[number]>(Type.String({
      enum: [...REGISTRATION_STATES],
      description: 'registering: a REGISTER is under way; registered: the registrar holds our binding; failed: the last REGISTER was ' +
        'refused or unanswered (retried with backoff); unregistered: no Parley process with a SIP endpoint registers them now',
    })),
    lastStatusCode: Type.Union([Type.Integer(), Type.Null()], { description: "The registrar's last final SIP status; null before any or when none came" }),
    expiresAt: Type.Union([DateTime, Type.Null()], { description: 'When the binding runs out unless refreshed (Parley refreshes it at half its life)' }),
  },
  { title: 'SipRegistrationStatus' },
);
export type SipRegistrationStatus = Static<typeof SipRegistrationStatus>;

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
    register: Register,
    registration: Type.Union([SipRegistrationStatus, Type.Null()], { description: 'How the registration stands; null when the credentials do not register' }),
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
  register: Type.Optional(Register),
};

export const SipCredentialCreate = Type.Object(
  { ...writeFields, password: Password },
  {
    additionalProperties: false,
    title: 'SipCredentialCreate',
    examples: [{ name: 'Main trunk', hostname: 'sip.example.com', port: 5060, transport: 'udp', username: 'parley-trunk', password: 'correct horse battery staple', maxAgentTasks: 2, register: true }],
  },
);
export type SipCredentialCreate = Static<typeof SipCredentialCreate>;

export const SipCredentialUpdate = Type.Object(
  { ...writeFields, password: Type.Optional(Type.String({ ...passwordRules, description: 'Left out (or ********): the stored password is kept' })) },
  { additionalProperties: false, title: 'SipCredentialUpdate' },
);
export type SipCredentialUpdate = Static<typeof SipCredentialUpdate>;

export const SipCredentialParams = Type.Object({ vendorId: Uuid, organizationId: Uuid, sipCredentialId: Uuid });
