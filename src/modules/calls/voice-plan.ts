import type { ProviderAccess, VoicePlan } from '../../calls/voice/plan.ts';
import type { Config } from '../../config.ts';
import type { AudioFormat, Encoding } from '../../voice/audio/format.ts';
import { DEEPGRAM_BASE_URL } from '../../voice/stt/deepgram.ts';
import type { SttProviderName } from '../../voice/stt/stt.ts';
import { DEFAULT_TTS_BASE_URLS, type TtsProviderName } from '../../voice/tts/index.ts';
import { vadSettings } from '../../voice/vad.ts';
import type { Strategy } from '../strategies/strategies.schemas.ts';

/** Providers that need a key (eSpeak is local and needs none). */
export type KeyedProvider = 'openai' | 'elevenlabs' | 'deepgram' | 'cartesia';

/** Where an organization's calls reach a provider, and with which key; null when it has no key to use. */
export type ResolveAccess = (organizationId: string, provider: KeyedProvider) => Promise<ProviderAccess | null>;

const SPEAKING: readonly string[] = ['elevenlabs', 'openai', 'cartesia', 'espeak'] satisfies TtsProviderName[];
const DEFAULT_OPENAI = 'https://api.openai.com/v1';
export const DEFAULT_REALTIME_MODEL = 'gpt-realtime';

/**
 * The platform's own provider keys and base URLs (operator configuration). OpenAI-compatible
 * servers that need no key (a local Whisper or TTS server) are reached without one when
 * OPENAI_BASE_URL names them.
 */
export function platformAccess(config: Config): ResolveAccess {
  const keyed: Record<KeyedProvider, { key: string | null; base: string | null; fallback: string }> = {
    openai: { key: config.openaiApiKey, base: config.openaiBaseUrl, fallback: DEFAULT_OPENAI },
    elevenlabs: { key: config.elevenlabsApiKey, base: config.elevenlabsBaseUrl, fallback: DEFAULT_TTS_BASE_URLS.elevenlabs },
    deepgram: { key: config.deepgramApiKey, base: config.deepgramBaseUrl, fallback: DEEPGRAM_BASE_URL },
    cartesia: { key: config.cartesiaApiKey, base: config.cartesiaBaseUrl, fallback: DEFAULT_TTS_BASE_URLS.cartesia },
  };
  return async (_organizationId, provider) => {
    const { key, base, fallback } = keyed[provider];
    if (!key && !(provider === 'openai' && base)) return null;
    return { apiKey: key, baseUrl: base ?? fallback };
  };
}

const ENV_KEY: Record<KeyedProvider, string> = { openai: 'OPENAI_API_KEY', elevenlabs: 'ELEVENLABS_API_KEY', deepgram: 'DEEPGRAM_API_KEY', cartesia: 'CARTESIA_API_KEY' };

const noKey = (source: string, provider: KeyedProvider) => ({
  source, statusCode: null,
  message: `no ${provider} key: add a ${provider} provider credential to the organization, or set ${ENV_KEY[provider]}`,
});

/**
 * How a voice call runs, from its strategy (type, voice, vad, transcriber) and the keys its
 * organization may use. A plan that cannot work is `unusable` with the reason, so the call
 * fails at start with a clear error frame and record.
 */
export async function voicePlanFor(
  strategy: { type: string; parameters: Strategy['parameters'] } | null,
  audio: { encoding: string; sampleRate: number },
  organizationId: string,
  resolve: ResolveAccess,
): Promise<VoicePlan> {
  const format: AudioFormat = { encoding: audio.encoding as Encoding, sampleRate: audio.sampleRate };
  const parameters = strategy?.parameters ?? {};
  const vad = vadSettings(parameters.vad ?? {});
  const { provider: voiceProvider, ...voiceFields } = parameters.voice ?? {};
  const voice = { ...voiceFields, ...(parameters.outputSampleRate ? { outputSampleRate: parameters.outputSampleRate } : {}) };
  if (strategy?.type === 'speech_to_speech') {
    const access = await resolve(organizationId, 'openai');
    if (!access) return { kind: 'unusable', audio: format, failure: noKey('realtime', 'openai') };
    return {
      kind: 'realtime', audio: format, vad, access, voice, model: parameters.model ?? DEFAULT_REALTIME_MODEL,
      ...(parameters.transcriber?.provider === 'openai' && parameters.transcriber.model ? { transcriptionModel: parameters.transcriber.model } : {}),
      ...(parameters.transcriber?.language ? { language: parameters.transcriber.language } : {}),
    };
  }
  const ttsProvider = voiceProvider ?? 'espeak';
  if (!SPEAKING.includes(ttsProvider)) {
    return { kind: 'unusable', audio: format, failure: { source: `tts:${ttsProvider}`, statusCode: null, message: `Parley cannot speak with ${ttsProvider} yet; choose ${SPEAKING.join(', ')}` } };
  }
  const ttsAccess = ttsProvider === 'espeak' ? { apiKey: null, baseUrl: '' } : await resolve(organizationId, ttsProvider as KeyedProvider);
  if (!ttsAccess) return { kind: 'unusable', audio: format, failure: noKey(`tts:${ttsProvider}`, ttsProvider as KeyedProvider) };
  const sttProvider: SttProviderName = parameters.transcriber?.provider === 'deepgram' ? 'deepgram' : 'openai';
  const sttAccess = await resolve(organizationId, sttProvider);
  if (!sttAccess) return { kind: 'unusable', audio: format, failure: noKey(`stt:${sttProvider}`, sttProvider) };
  return {
    kind: 'pipeline', audio: format, vad,
    tts: { provider: ttsProvider as TtsProviderName, access: ttsAccess, voice },
    stt: {
      provider: sttProvider, access: sttAccess,
      ...(parameters.transcriber?.model ? { model: parameters.transcriber.model } : {}),
      ...(parameters.transcriber?.language ? { language: parameters.transcriber.language } : {}),
    },
  };
}
