import { anthropic } from './anthropic.ts';
import { azure } from './azure.ts';
import { cartesia } from './cartesia.ts';
import { deepgram } from './deepgram.ts';
import { demo } from './demo.ts';
import type { ProviderVariable } from '../../config.ts';
import type { ProviderDescriptor, ProviderKind } from './descriptor.ts';
import { elevenlabs } from './elevenlabs.ts';
import { espeak } from './espeak.ts';
import { google } from './google.ts';
import { openai } from './openai.ts';
import { openaiCompatible } from './openai-compatible.ts';
import { twilio } from './twilio.ts';
import { whisper } from './whisper.ts';

/**
 * Every provider Parley knows, one descriptor each (one file per provider beside this one). The
 * strategy enums (voice.provider, transcriber.provider, llm.provider), the provider-credential
 * enum, the voice plan and kit, the platform's environment variables (config.ts reads them,
 * `parley help environment` and docs/configuration.md list them), the OpenAPI document and the
 * console's provider list all derive from this list; the order here is the order they show.
 */
export const PROVIDERS = [elevenlabs, openai, azure, google, cartesia, deepgram, espeak, twilio, openaiCompatible, anthropic, whisper, demo] as const;

type Descriptor = (typeof PROVIDERS)[number];
export type ProviderName = Descriptor['name'];

/** The providers serving one kind (llm, stt, tts, realtime, telephony), in registry order. */
export function providersOf<K extends ProviderKind>(kind: K): (Descriptor & Required<Pick<ProviderDescriptor, K>>)[] {
  return PROVIDERS.filter((d): d is Descriptor & Required<Pick<ProviderDescriptor, K>> => kind in d);
}

/** Names for an enum: the providers of a kind, or those an organization can hold a credential for. */
export const namesOf = (kind: ProviderKind | 'credential'): ProviderName[] =>
  (kind === 'credential' ? PROVIDERS.filter((d) => d.credential !== null) : providersOf(kind)).map((d) => d.name);

/** The descriptor of a name the schemas have already checked (or null for a name that is not one). */
export function descriptorOf(name: string): ProviderDescriptor | null {
  return PROVIDERS.find((d) => d.name === name) ?? null;
}

/** The platform variables of every provider, in registry order: what the app layer hands config.ts to read. */
export const PROVIDER_VARIABLES: readonly ProviderVariable[] = PROVIDERS.flatMap((d) => (d.platform ? [d.platform.apiKey, d.platform.baseUrl] : []));
