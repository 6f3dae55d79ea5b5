import type { AudioFormat, Encoding } from '../../voice/audio/format.ts';
import { DEFAULT_REALTIME_MODEL } from '../../voice/realtime/session-config.ts';
import { vadSettings } from '../../voice/vad.ts';
import { accessFor, isFailure, type ResolveAccess } from '../providers/access.ts';
import { descriptorOf, providersOf, type ProviderName } from '../providers/registry.ts';
import type { StrategyParameters } from '../strategy-parameters.ts';
import type { VoicePlan } from './plan.ts';

/** What a strategy that names no voice speaks with: local, no account. */
const DEFAULT_TTS: ProviderName = 'espeak';
/** What a strategy that names no transcriber listens with; it also reaches self-hosted Whisper servers. */
const DEFAULT_STT: ProviderName = 'openai';

/** The providers Parley can speak with (a factory in their descriptor), for the message of one it cannot. */
const speaking = () => providersOf('tts').filter((d) => d.tts.open).map((d) => d.name);

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
    const realtime = providersOf('realtime')[0]!.name;
    const access = await accessFor(resolve, organizationId, realtime, `realtime:${realtime}`);
    if (isFailure(access)) return { kind: 'unusable', audio: format, failure: access };
    const { confidenceThreshold, stopDuration, backbufferDuration } = parameters.vad ?? {};
    return {
      kind: 'realtime', provider: realtime, audio: format, access, voice, model: parameters.model ?? DEFAULT_REALTIME_MODEL,
      // The server VAD has no minimum volume or start duration; what the strategy leaves out, the server's defaults decide.
      vad: {
        ...(confidenceThreshold !== undefined ? { confidenceThreshold } : {}),
        ...(stopDuration !== undefined ? { stopDuration } : {}),
        ...(backbufferDuration !== undefined ? { backbufferDuration } : {}),
      },
      ...(parameters.transcriber?.provider === realtime && parameters.transcriber.model ? { transcriptionModel: parameters.transcriber.model } : {}),
      ...(parameters.transcriber?.language ? { language: parameters.transcriber.language } : {}),
    };
  }
  const ttsProvider = (voiceProvider ?? DEFAULT_TTS) as ProviderName;
  if (!descriptorOf(ttsProvider)?.tts?.open) {
    return { kind: 'unusable', audio: format, failure: { source: `tts:${ttsProvider}`, statusCode: null, message: `Parley cannot speak with ${ttsProvider} yet; choose ${speaking().join(', ')}` } };
  }
  const ttsAccess = descriptorOf(ttsProvider)?.credential ? await accessFor(resolve, organizationId, ttsProvider, `tts:${ttsProvider}`) : { apiKey: null, baseUrl: '' };
  if (isFailure(ttsAccess)) return { kind: 'unusable', audio: format, failure: ttsAccess };
  const sttProvider = (parameters.transcriber?.provider ?? DEFAULT_STT) as ProviderName;
  const sttAccess = await accessFor(resolve, organizationId, sttProvider, `stt:${sttProvider}`);
  if (isFailure(sttAccess)) return { kind: 'unusable', audio: format, failure: sttAccess };
  return {
    kind: 'pipeline', audio: format, vad,
    tts: { provider: ttsProvider, access: ttsAccess, voice },
    stt: {
      provider: sttProvider, access: sttAccess,
      ...(parameters.transcriber?.model ? { model: parameters.transcriber.model } : {}),
      ...(parameters.transcriber?.language ? { language: parameters.transcriber.language } : {}),
    },
  };
}
