import { platformAccess } from '../../calls/providers/access.ts';
import { descriptorOf } from '../../calls/providers/registry.ts';
import type { Context } from '../../context.ts';
import { MASK } from '../../crypto/secret-box.ts';
import { bumpCounter } from '../../db/counters.ts';
import { parseHostLiteral } from '../../egress/address.ts';
import { checkAddress, type AllowList } from '../../egress/policy.ts';
import { badRequest, conflict, notFound, type ErrorDetail } from '../../http/errors.ts';
import type { Edit } from '../../http/updates.ts';
import { findCredentialOfProvider, findProviderCredential, providerCredentialCounter, toProviderCredential } from './providers.repository.ts';
import { NO_KEY } from './providers.table.ts';
import type { ProviderCredential, ProviderCredentialCreate, ProviderCredentialUpdate, ProviderName } from './providers.schemas.ts';

export type ProviderDeps = Pick<Context, 'db' | 'secrets' | 'egress' | 'clock'>;

const NOT_FOUND = 'Provider credential';

const sealKey = (deps: Pick<ProviderDeps, 'secrets'>, key: string | null) => (key === null ? NO_KEY : deps.secrets.seal(key));
const SCHEMES = ['http:', 'https:', 'ws:', 'wss:'];

/** Problems with a tenant's base URL: the schemes providers speak, nothing a path would be appended to badly, and the egress policy on a literal address. */
export function baseUrlProblems(value: string, allow: AllowList): ErrorDetail[] {
  const path = 'baseUrl';
  const url = URL.parse(value);
  if (!url) return [{ path, message: 'is not a valid URL' }];
  if (!SCHEMES.includes(url.protocol)) return [{ path, message: 'must use http, https, ws or wss' }];
  if (url.username || url.password) return [{ path, message: 'must not carry credentials; the key goes in apiKey' }];
  // The provider's own paths are appended to the base URL: a query or fragment would swallow them.
  if (url.search || url.hash || value.includes('?') || value.includes('#')) return [{ path, message: 'must not carry a query or fragment' }];
  // A literal address is judged now; a name is judged on every connection, on the resolved address.
  const literal = parseHostLiteral(url.hostname);
  if (literal && !checkAddress(literal.address, allow).allowed) return [{ path, message: 'is refused by the egress policy (a private, loopback or reserved address)' }];
  return [];
}

/** Two base URLs name the same destination when they parse to the same URL (case of the host, a trailing slash). */
const sameDestination = (a: string | null, b: string | null) =>
  (a === null ? null : (URL.parse(a)?.href ?? a)) === (b === null ? null : (URL.parse(b)?.href ?? b));

/** Whether a credential of the provider may hold no key: always, or (openai) when its baseUrl names a server of the organization's own. */
function keyMayBeLeftOut(provider: string, baseUrl: string | null | undefined): boolean {
  const rule = descriptorOf(provider)?.credential?.apiKey;
  return rule === 'optional' || (rule === 'unless_base_url' && baseUrl != null);
}

const keyRequired = (provider: string): ErrorDetail => ({
  path: 'apiKey',
  message: descriptorOf(provider)?.credential?.apiKey === 'unless_base_url'
    ? `is required for ${provider} unless baseUrl names a server of your own (a self-hosted server may take none)`
    : `is required for ${provider}`,
});

/** What the provider's credential rules (its registry descriptor) say of the body's fields. */
function fieldProblems(body: ProviderCredentialCreate | ProviderCredentialUpdate, allow: AllowList): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const rules = descriptorOf(body.provider)?.credential;
  if (rules?.baseUrl === 'required' && body.baseUrl == null) {
    problems.push({ path: 'baseUrl', message: `is required for ${body.provider}: the server's base URL, e.g. https://api.groq.com/openai/v1 or http://127.0.0.1:11434/v1` });
  }
  if (body.apiKey === null && !keyMayBeLeftOut(body.provider, body.baseUrl)) problems.push(keyRequired(body.provider));
  if (body.baseUrl != null) {
    // Twilio's auth token is never sent anywhere: it only checks the signatures of Twilio's requests.
    if (rules?.baseUrl === 'none') problems.push({ path: 'baseUrl', message: `a ${body.provider} credential has no baseUrl: its key is never sent anywhere, it only checks the signatures of the provider's requests` });
    else problems.push(...baseUrlProblems(body.baseUrl, allow));
  }
  if (body.accountSid != null && !rules?.accountSid) problems.push({ path: 'accountSid', message: `a ${body.provider} credential carries no accountSid (only a twilio credential does)` });
  return problems;
}

export async function createProviderCredential(deps: ProviderDeps, organizationId: string, body: ProviderCredentialCreate) {
  const problems = fieldProblems(body, deps.egress.allow);
  if (body.apiKey === MASK) problems.push({ path: 'apiKey', message: `"${MASK}" keeps a stored key, but nothing is stored yet; send the key` });
  if (body.apiKey === undefined && !keyMayBeLeftOut(body.provider, body.baseUrl)) problems.push(keyRequired(body.provider));
  if (problems.length) throw badRequest('Invalid provider credential', problems);
  const at = deps.clock.now().toISOString();
  const row = {
    id: crypto.randomUUID(),
    organization_id: organizationId,
    provider: body.provider,
    api_key_sealed: sealKey(deps, body.apiKey ?? null),
    base_url: body.baseUrl ?? null,
    account_sid: body.accountSid ?? null,
    created_at: at,
    updated_at: at,
  };
  await deps.db.kysely.transaction().execute(async (trx) => {
    if (await findCredentialOfProvider(trx, organizationId, body.provider)) {
      throw conflict(`This organization already has a ${body.provider} credential`, [{ path: 'provider', message: `${body.provider} already has a credential in this organization; replace it with PUT` }]);
    }
    await trx.insertInto('provider_credentials').values(row).execute();
    await bumpCounter(trx, providerCredentialCounter(organizationId), 1);
  });
  return toProviderCredential(row);
}

/**
 * Replaces a credential. A left-out or masked `apiKey` keeps the stored key, but never when the
 * base URL changes: the key must be sent again, or an editor could send the stored key to a
 * server of their own. The write is conditional on the base URL read, so a concurrent change
 * of it cannot carry a kept key along either.
 */
export async function updateProviderCredential(
  deps: ProviderDeps, organizationId: string, id: string, edit: Edit<ProviderCredential, ProviderCredentialUpdate>,
): Promise<void> {
  const { kysely } = deps.db;
  const stored = await findProviderCredential(kysely, organizationId, id);
  if (!stored) throw notFound(NOT_FOUND);
  const body = edit(toProviderCredential(stored));
  const problems = fieldProblems(body, deps.egress.allow);
  if (body.provider !== stored.provider) problems.push({ path: 'provider', message: `is ${stored.provider} and cannot change; create a credential for ${body.provider} instead` });
  const baseUrl = body.baseUrl ?? null;
  const keep = body.apiKey === undefined || body.apiKey === MASK;
  // A credential without a key has nothing a new destination could be sent.
  if (keep && stored.api_key_sealed !== NO_KEY && !sameDestination(stored.base_url, baseUrl)) {
    problems.push({ path: 'apiKey', message: 'must be sent again: baseUrl changed, and a kept key never follows a new destination' });
  }
  // A keyless credential that loses its baseUrl would send no key to the public API.
  if (keep && stored.api_key_sealed === NO_KEY && !keyMayBeLeftOut(stored.provider, baseUrl)) problems.push(keyRequired(stored.provider));
  if (problems.length) throw badRequest('Invalid provider credential', problems);
  let update = kysely
    .updateTable('provider_credentials')
    .set({
      ...(keep ? {} : { api_key_sealed: sealKey(deps, body.apiKey ?? null) }),
      base_url: baseUrl,
      account_sid: body.accountSid ?? null,
      updated_at: deps.clock.now().toISOString(),
    })
    .where('organization_id', '=', organizationId)
    .where('id', '=', id);
  if (keep) update = stored.base_url === null ? update.where('base_url', 'is', null) : update.where('base_url', '=', stored.base_url);
  const result = await update.executeTakeFirst();
  if (!result.numUpdatedRows) {
    if (!(await findProviderCredential(kysely, organizationId, id))) throw notFound(NOT_FOUND);
    throw conflict('The credential\'s baseUrl changed meanwhile; read it again and send the key with your change');
  }
}

export async function deleteProviderCredential(deps: ProviderDeps, organizationId: string, id: string): Promise<void> {
  await deps.db.kysely.transaction().execute(async (trx) => {
    const deleted = await trx.deleteFrom('provider_credentials').where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
    if (!deleted.numDeletedRows) throw notFound(NOT_FOUND);
    await bumpCounter(trx, providerCredentialCounter(organizationId), -1);
  });
}

/** Where a call reaches a speech provider, and with which key. */
export interface ProviderAccess {
  /** The key to send; null for a server that takes none (a credential without one, or only OPENAI_BASE_URL on the platform). */
  apiKey: string | null;
  /** null: the provider's public default (its registry descriptor's). */
  baseUrl: string | null;
  source: 'organization' | 'platform';
  /**
   * true when baseUrl came from a tenant: connect only through the egress policy
   * (`guardConnection` in src/egress/connect-guard.ts). Platform URLs are operator configuration.
   */
  egressChecked: boolean;
  /** Twilio's Account SID when the organization's twilio credential names one. */
  accountSid: string | null;
}

/**
 * The key and base URL a call of this organization uses for a provider: the organization's own
 * credential if it has one (its baseUrl, else the platform's), else the platform's environment
 * (when it names a key, or for openai a base URL), else null: the call cannot use the provider. Only the
 * organization's own row is ever read, so one tenant's key never serves another's call.
 */
export async function resolveProviderAccess(ctx: Pick<Context, 'db' | 'secrets' | 'config'>, organizationId: string, provider: ProviderName): Promise<ProviderAccess | null> {
  const descriptor = descriptorOf(provider);
  const platform = descriptor ? platformAccess(ctx.config, descriptor) : { apiKey: null, baseUrl: null };
  const row = await findCredentialOfProvider(ctx.db.kysely, organizationId, provider);
  if (row) {
    let apiKey: string | null;
    try {
      apiKey = row.api_key_sealed === NO_KEY ? null : ctx.secrets.open(row.api_key_sealed);
    } catch {
      // Never the sealed text or the cause: only which credential could not be opened.
      throw new Error(`the ${provider} provider credential ${row.id} cannot be opened (was PARLEY_SECRET_KEY changed?)`);
    }
    return { apiKey, baseUrl: row.base_url ?? platform.baseUrl, source: 'organization', egressChecked: row.base_url !== null, accountSid: row.account_sid };
  }
  // A platform base URL without a key serves only where the descriptor says so (OPENAI_BASE_URL
  // may name a local OpenAI-compatible server that needs none); the other providers need a key.
  if (platform.apiKey === null && !(descriptor?.platform?.keyless && platform.baseUrl !== null)) return null;
  return { ...platform, source: 'platform', egressChecked: false, accountSid: null };
}
