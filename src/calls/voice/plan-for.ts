import type { AudioFormat, Encoding } from '../../voice/audio/format.ts';
import { DEFAULT_REALTIME_MODEL } from '../../voice/realtime/session-config.ts';
import type { SttProviderName } from '../../voice/stt/stt.ts';
import type { TtsProviderName } from '../../voice/tts/index.ts';
import { vadSettings } from '../../voice/vad.ts';
import { turnSettings } from '../turns/settings.ts';
import type { CallFailure } from '../failure.ts';
import type { StrategyParameters } from '../strategy-parameters.ts';
import type { ProviderAccess, VoicePlan } from './plan.ts';

/** Providers that need a key (eSpeak is local and needs none). */
export type KeyedProvider = 'openai' | 'elevenlabs' | 'deepgram' | 'cartesia';

/**
 * Where an organization's calls reach a provider, and with which key; null when it has no key
 * to use; `refused` when the organization's base URL is one the egress policy refuses.
 */
export type ResolveAccess = (organizationId: string, provider: KeyedProvider) => Promise<ProviderAccess | { refused: string } | null>;

const SPEAKING: readonly string[] = ['elevenlabs', 'openai', 'cartesia', 'espeak'] satisfies TtsProviderName[];
const ENV_KEY: Record<KeyedProvider, string> = { openai: 'OPENAI_API_KEY', elevenlabs: 'ELEVENLABS_API_KEY', deepgram: 'DEEPGRAM_API_KEY', cartesia: 'CARTESIA_API_KEY' };

const noKey = (source: string, provider: KeyedProvider) => ({
  source, statusCode: null,
  message: `no ${provider} key: add a ${provider} provider credential to the organization, or set ${ENV_KEY[provider]}`,
});

/** The access to use, or why there is none (the call fails at start with this failure). */
async function accessFor(resolve: ResolveAccess, organizationId: string, provider: KeyedProvider, source: string): Promise<ProviderAccess | CallFailure> {
  const access = await resolve(organizationId, provider);
  if (!access) return noKey(source, provider);
  if ('refused' in access) return { source, statusCode: null, message: `the ${provider} credential's baseUrl: ${access.refused}` };
  return access;
}

const isFailure = (value: ProviderAccess | CallFailure): value is CallFailure => 'source' in value;

/**
 * How a voice call runs, from its strategy (type, voice, vad, transcriber) and the keys its
 * organization may use. A plan that cannot work is `unusable` with the reason, so the call
 * fails at start with a clear error frame and record.
 */
export async function voicePlanFor(
  strategy: { type: string; parameters: StrategyParameters } | null,
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
    const access = await accessFor(resolve, organizationId, 'openai', 'realtime:openai');
    if (isFailure(access)) return { kind: 'unusable', audio: format, failure: access };
    const { confidenceThreshold, stopDuration, backbufferDuration } = parameters.vad ?? {};
    const turn = turnSettings(parameters.turn);
    return {
      kind: 'realtime', audio: format, access, voice, model: parameters.model ?? DEFAULT_REALTIME_MODEL,
      turns: turn.endpointing === 'smart' ? { detection: 'semantic', eagerness: eagernessFor(turn.maxSilence) } : { detection: 'silence' },
      // The server VAD has no minimum volume or start duration; what the strategy leaves out, the server's defaults decide.
      vad: {
        ...(confidenceThreshold !== undefined ? { confidenceThreshold } : {}),
        ...(stopDuration !== undefined ? { stopDuration } : {}),
        ...(backbufferDuration !== undefined ? { backbufferDuration } : {}),
      },
      ...(parameters.transcriber?.provider === 'openai' && parameters.transcriber.model ? { transcriptionModel: parameters.transcriber.model } : {}),
      ...(parameters.transcriber?.language ? { language: parameters.transcriber.language } : {}),
    };
  }
  const ttsProvider = voiceProvider ?? 'espeak';
  if (!SPEAKING.includes(ttsProvider)) {
    return { kind: 'unusable', audio: format, failure: { source: `tts:${ttsProvider}`, statusCode: null, message: `Parley cannot speak with ${ttsProvider} yet; choose ${SPEAKING.join(', ')}` } };
  }
  const ttsAccess = ttsProvider === 'espeak' ? { apiKey: null, baseUrl: '' } : await accessFor(resolve, organizationId, ttsProvider as KeyedProvider, `tts:${ttsProvider}`);
  if (isFailure(ttsAccess)) return { kind: 'unusable', audio: format, failure: ttsAccess };
  const sttProvider: SttProviderName = parameters.transcriber?.provider === 'deepgram' ? 'deepgram' : 'openai';
  const sttAccess = await accessFor(resolve, organizationId, sttProvider, `stt:${sttProvider}`);
  if (isFailure(sttAccess)) return { kind: 'unusable', audio: format, failure: sttAccess };
  return {
    kind: 'pipeline', audio: format, vad, turn: turnSettings(parameters.turn),
    tts: { provider: ttsProvider as TtsProviderName, access: ttsAccess, voice },
    stt: {
      provider: sttProvider, access: sttAccess,
      ...(parameters.transcriber?.model ? { model: parameters.transcriber.model } : {}),
      ...(parameters.transcriber?.language ? { language: parameters.transcriber.language } : {}),
    },
  };
}

/**
 * The semantic VAD's eagerness for a strategy's maxSilence: its longest waits are 2 s (high),
 * 4 s (medium) and 8 s (low), so the one whose wait is not longer than maxSilence allows.
 */
export function eagernessFor(maxSilence: number): 'low' | 'medium' | 'high' {
  return maxSilence <= 2 ? 'high' : maxSilence <= 4 ? 'medium' : 'low';
}
