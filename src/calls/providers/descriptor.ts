import type { ProviderVariable } from '../../config.ts';
import type { SttOptions, SttSession } from '../../voice/stt/stt.ts';
import type { EspeakEngine } from '../../voice/tts/espeak-engine.ts';
import type { TtsOptions, TtsSession } from '../../voice/tts/types.ts';
import type { OpenAiRealtimeClient, RealtimeOptions } from '../../voice/realtime/openai.ts';
import type { Llm, LlmClientOptions } from '../llm.ts';

/**
 * What Parley knows about one provider, in one place: the registry (registry.ts) lists every
 * descriptor, and everything that names providers derives from it (the strategy and credential
 * enums, the voice plan and kit, the platform's environment variables, the OpenAPI document).
 */

/** What an organization's credential for the provider holds. */
export interface CredentialRules {
  /**
   * `optional`: servers that take no key (self-hosted OpenAI-compatible ones); `unless_base_url`:
   * the public API needs one, a server of the organization's own at its baseUrl may take none
   * (a self-hosted Whisper or TTS server speaking OpenAI's API).
   */
  readonly apiKey: 'required' | 'optional' | 'unless_base_url';
  /** `none`: the key is never sent anywhere (Twilio's auth token only checks signatures). */
  readonly baseUrl: 'optional' | 'required' | 'none';
  /** Twilio: the Account SID the auth token belongs to. */
  readonly accountSid?: true;
}

/** The platform's own access to the provider (operator configuration), for organizations without a credential. */
export interface PlatformAccessRules {
  readonly apiKey: ProviderVariable;
  readonly baseUrl: ProviderVariable;
  /** A platform base URL without a key serves too (a local OpenAI-compatible server needs none). */
  readonly keyless?: true;
}

/** Local engines the providers of a process share, loaded on first use. */
export interface LocalEngines {
  espeak(): Promise<EspeakEngine>;
}

export interface TtsSupport {
  /** The rates the provider can answer in (it picks the one nearest the strategy's outputSampleRate). */
  readonly sampleRates: readonly number[];
  /** Audio arrives while the sentence is still being synthesised. */
  readonly streaming: boolean;
  /** Opens a call's session; absent: the strategy API accepts the provider but Parley cannot speak with it yet. */
  readonly open?: (options: TtsOptions, engines: LocalEngines) => Promise<TtsSession>;
}

export interface SttSupport {
  /** Interim hypotheses while the caller speaks. */
  readonly interim: boolean;
  /** Audio is streamed as it comes (else sent once the utterance ended). */
  readonly streaming: boolean;
  readonly open: (options: SttOptions) => Promise<SttSession>;
}

export interface LlmSupport {
  /** The chat client of one call (or of the platform): streamed answers and tool calls. */
  readonly create: (options: LlmClientOptions) => Llm;
}

export interface RealtimeSupport {
  readonly connect: (options: RealtimeOptions) => Promise<OpenAiRealtimeClient>;
}

export interface ProviderDescriptor {
  readonly name: string;
  /** As people write it, for messages and docs. */
  readonly title: string;
  /** Where the provider is reached when neither a credential nor the platform names a base URL; null when it has none. */
  readonly defaultBaseUrl: string | null;
  /** What an organization's provider credential holds; null: the provider takes none (local, or not usable yet). */
  readonly credential: CredentialRules | null;
  /** The platform's environment fallback; null: every organization brings its own. */
  readonly platform: PlatformAccessRules | null;
  readonly llm?: LlmSupport;
  readonly stt?: SttSupport;
  readonly tts?: TtsSupport;
  readonly realtime?: RealtimeSupport;
  /** A credential kind only: its key checks the signatures of the provider's webhooks (Twilio). */
  readonly telephony?: { readonly signatures: true };
}

export type ProviderKind = 'llm' | 'stt' | 'tts' | 'realtime' | 'telephony';

/** A descriptor with its exact type kept (its name as a literal), so the registry's name unions follow it. */
export const defineProvider = <const D extends ProviderDescriptor>(descriptor: D): D => descriptor;

/** The platform's key and base URL variables of a provider, in the words every provider uses. */
export function platformVariables(prefix: string, title: string, name: string, defaultBaseUrl: string): PlatformAccessRules {
  const an = /^[aeiou]/.test(name) ? 'an' : 'a';
  return {
    apiKey: { name: `${prefix}_API_KEY`, kind: 'apiKey', description: `${title} key for the calls of organizations without ${an} ${name} provider credential` },
    baseUrl: {
      name: `${prefix}_BASE_URL`, kind: 'baseUrl',
      description: `where ${title} is reached (default ${defaultBaseUrl}) unless a provider credential names its own baseUrl`,
    },
  };
}
