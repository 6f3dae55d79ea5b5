import { DEFAULT_CARTESIA_BASE_URL } from './cartesia.ts';
import { DEFAULT_ELEVENLABS_BASE_URL } from './elevenlabs.ts';
import { DEFAULT_OPENAI_BASE_URL } from './openai.ts';
import type { TtsProviderName } from './types.ts';

export type { TtsProvider, TtsProviderName, TtsSession, VoiceSettings } from './types.ts';
export { loadEspeakEngine, type EspeakEngine } from './espeak-engine.ts';

/** Where each provider is reached when neither a credential nor the platform config names a base URL. */
export const DEFAULT_TTS_BASE_URLS: Record<TtsProviderName, string> = {
  elevenlabs: DEFAULT_ELEVENLABS_BASE_URL,
  openai: DEFAULT_OPENAI_BASE_URL,
  cartesia: DEFAULT_CARTESIA_BASE_URL,
  espeak: '',
};
