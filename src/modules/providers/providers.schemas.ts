import { Type, type Static } from 'typebox';
import { namesOf, PROVIDERS as REGISTRY, type ProviderName } from '../../calls/providers/registry.ts';
import { DateTime, Uuid } from '../../http/schemas.ts';
import { MASK } from '../../crypto/secret-box.ts';

export type { ProviderName };

/** The providers an organization can hold a credential for (the registry's, in its order). */
const PROVIDERS = namesOf('credential');
/** Those whose credential may hold no key, and those whose credential must name a base URL. */
const KEYLESS = REGISTRY.filter((d) => d.credential && d.credential.apiKey !== 'required').map((d) => d.name + (d.credential?.apiKey === 'unless_base_url' ? ' with a baseUrl' : '')).join(', ');
const NEEDS_BASE_URL = REGISTRY.filter((d) => d.credential?.baseUrl === 'required').map((d) => d.name).join(', ');

const Provider = Type.Unsafe<ProviderName>(Type.String({
  enum: [...PROVIDERS],
  description: 'One credential per provider per organization. `twilio`: the account\'s auth token, which checks the X-Twilio-Signature of its voice webhooks',
}));
// Line breaks or NUL would let a key split the HTTP header it travels in.
const keyRules = { minLength: 1, maxLength: 4096, pattern: '^[^\\r\\n\\u0000]+$' };
const ApiKey = Type.String({ ...keyRules, description: `The provider's API key (for twilio: the auth token); write-only, shown as ${MASK}. Required, except for ${KEYLESS} (servers that take none)` });
const BaseUrl = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: `Where the provider is reached instead of its public address (required for ${NEEDS_BASE_URL}, which has none): http(s) or ws(s), without credentials, query or fragment. ` +
    'A literal private or loopback address is refused unless PARLEY_EGRESS_ALLOW names it; a host name is judged on every connection.',
  examples: ['https://api.eu.elevenlabs.io'],
});
const AccountSid = Type.String({
  pattern: '^AC[0-9a-fA-F]{32}$',
  description: 'twilio only: the Account SID (AC + 32 hex digits) the auth token belongs to. Not secret. When set, the voice webhook ' +
    'also refuses a signed request whose AccountSid is another account',
  examples: ['AC0123456789abcdef0123456789abcdef'],
});

export const ProviderCredential = Type.Object(
  {
    id: Uuid,
    organizationId: Uuid,
    provider: Provider,
    apiKey: Type.Union([Type.Literal(MASK), Type.Null()], { description: `The mask when a key is stored (the key is write-only); null when the credential holds none (${KEYLESS})` }),
    baseUrl: Type.Union([Type.String(), Type.Null()], { description: 'null: the platform base URL, else the provider\'s public one' }),
    accountSid: Type.Union([Type.String(), Type.Null()]),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'ProviderCredential' },
);
export type ProviderCredential = Static<typeof ProviderCredential>;

export const ProviderCredentialCreate = Type.Object(
  {
    provider: Provider,
    apiKey: Type.Optional(ApiKey),
    baseUrl: Type.Optional(Type.Union([BaseUrl, Type.Null()])),
    accountSid: Type.Optional(Type.Union([AccountSid, Type.Null()])),
  },
  {
    additionalProperties: false,
    title: 'ProviderCredentialCreate',
    examples: [
      { provider: 'elevenlabs', apiKey: 'sk_0123456789abcdef' },
      { provider: 'twilio', apiKey: 'your-auth-token', accountSid: 'AC0123456789abcdef0123456789abcdef' },
      { provider: 'openai_compatible', baseUrl: 'http://ollama.internal:11434/v1' },
    ],
  },
);
export type ProviderCredentialCreate = Static<typeof ProviderCredentialCreate>;

export const ProviderCredentialUpdate = Type.Object(
  {
    provider: Type.Unsafe<ProviderName>(Type.String({ enum: [...PROVIDERS], description: 'Must be the stored provider; a credential never changes provider' })),
    apiKey: Type.Optional(Type.Union([
      Type.String({ ...keyRules, description: `Left out (or ${MASK}): the stored key is kept, unless baseUrl changes` }),
      Type.Null({ description: `No key (${KEYLESS} only)` }),
    ])),
    baseUrl: Type.Optional(Type.Union([BaseUrl, Type.Null()], { description: 'Left out or null: none. Any change needs the apiKey sent again' })),
    accountSid: Type.Optional(Type.Union([AccountSid, Type.Null()])),
  },
  { additionalProperties: false, title: 'ProviderCredentialUpdate' },
);
export type ProviderCredentialUpdate = Static<typeof ProviderCredentialUpdate>;

export const ProviderCredentialParams = Type.Object({ vendorId: Uuid, organizationId: Uuid, providerCredentialId: Uuid });

export const PROVIDER_SORT = { provider: 'provider', createdAt: 'created_at', updatedAt: 'updated_at' } as const;

export const ProviderFilter = {
  provider: Type.Optional(Provider),
};
