import type { LookupFunction } from 'node:net';
import type { Config } from '../../config.ts';
import type { CallFailure } from '../failure.ts';
import { demo } from './demo.ts';
import type { ProviderDescriptor } from './descriptor.ts';
import { openai } from './openai.ts';
import { descriptorOf, type ProviderName } from './registry.ts';

/** Where a provider is reached, and with which key (null: none is sent). */
export interface ProviderAccess {
  apiKey: string | null;
  baseUrl: string;
  /** Set when the base URL is a tenant's: every connection resolves its host through the egress policy. */
  lookup?: LookupFunction | undefined;
}

/**
 * Where an organization's calls reach a provider, and with which key; null when it has no key
 * to use; `refused` when the organization's base URL is one the egress policy refuses.
 */
export type ResolveAccess = (organizationId: string, provider: ProviderName) => Promise<ProviderAccess | { refused: string } | null>;

/** The platform's key and base URL of a provider (the operator's environment), each null when unset. */
export function platformAccess(config: Pick<Config, 'providerEnv'>, descriptor: ProviderDescriptor): { apiKey: string | null; baseUrl: string | null } {
  const env = descriptor.platform;
  return { apiKey: env ? (config.providerEnv[env.apiKey.name] ?? null) : null, baseUrl: env ? (config.providerEnv[env.baseUrl.name] ?? null) : null };
}

/**
 * The platform's LLM, which serves the calls whose strategy names none: OPENAI_BASE_URL and
 * OPENAI_API_KEY, as before providers per organization; with neither set, the built-in demo
 * model, so a fresh install can hold a conversation (never when either is set).
 */
export function platformLlm(config: Pick<Config, 'providerEnv'>): { provider: typeof openai | typeof demo; apiKey: string | null; baseUrl: string | null } {
  const access = platformAccess(config, openai);
  if (access.apiKey === null && access.baseUrl === null) return { provider: demo, ...access };
  return { provider: openai, ...access };
}

/** Why a call cannot use a provider it names: no key anywhere (the message says where to add one). */
function noKey(source: string, provider: ProviderName): CallFailure {
  const platform = descriptorOf(provider)?.platform;
  return {
    source, statusCode: null,
    message: `no ${provider} key: add ${/^[aeiou]/.test(provider) ? 'an' : 'a'} ${provider} provider credential to the organization${platform ? `, or set ${platform.apiKey.name}` : ''}`,
  };
}

/** The access a call uses for a provider, or the failure that ends it at start (source: `tts:elevenlabs`, `llm:anthropic`, …). */
export async function accessFor(resolve: ResolveAccess, organizationId: string, provider: ProviderName, source: string): Promise<ProviderAccess | CallFailure> {
  const access = await resolve(organizationId, provider);
  if (!access) return noKey(source, provider);
  if ('refused' in access) return { source, statusCode: null, message: `the ${provider} credential's baseUrl: ${access.refused}` };
  return access;
}

export const isFailure = (value: ProviderAccess | CallFailure): value is CallFailure => 'source' in value;
