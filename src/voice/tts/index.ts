import { cartesiaTts, DEFAULT_CARTESIA_BASE_URL } from './cartesia.ts';
import { DEFAULT_ELEVENLABS_BASE_URL, elevenLabsTts } from './elevenlabs.ts';
import type { EspeakEngine } from './espeak-engine.ts';
import { espeakTts } from './espeak.ts';
import { DEFAULT_OPENAI_BASE_URL, openAiTts } from './openai.ts';
import type { TtsProvider, TtsProviderName } from './types.ts';

export type { TtsChunk, TtsOptions, TtsProvider, TtsProviderName, TtsSession, VoiceSettings } from './types.ts';
export { TtsError } from './types.ts';
export { loadEspeakEngine, type EspeakEngine } from './espeak-engine.ts';

/** Where each provider is reached when neither a credential nor the platform config names a base URL. */
export const DEFAULT_TTS_BASE_URLS: Record<TtsProviderName, string> = {
  elevenlabs: DEFAULT_ELEVENLABS_BASE_URL,
  openai: DEFAULT_OPENAI_BASE_URL,
  cartesia: DEFAULT_CARTESIA_BASE_URL,
  espeak: '',
};

/** The TTS providers, built once at startup around the process's eSpeak engine. */
export function createTtsProviders(espeak: EspeakEngine): Record<TtsProviderName, TtsProvider> {
  return { elevenlabs: elevenLabsTts, openai: openAiTts, cartesia: cartesiaTts, espeak: espeakTts(espeak) };
}

/**
 * The provider a strategy's `voice.provider` names; none means eSpeak. Providers the strategy
 * API accepts but Parley cannot speak with yet (azure, google, deepgram) give null.
 */
export function ttsProviderFor(providers: Record<TtsProviderName, TtsProvider>, name: string | undefined): TtsProvider | null {
  if (name === undefined) return providers.espeak;
  return name in providers ? providers[name as TtsProviderName] : null;
}
