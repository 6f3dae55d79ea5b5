import type { AudioFormat, Encoding } from '../../voice/audio/format.ts';
import { DEFAULT_REALTIME_MODEL } from '../../voice/realtime/session-config.ts';
import { vadSettings } from '../../voice/vad.ts';
import { accessFor, isFailure, type ResolveAccess } from '../providers/access.ts';
import { descriptorOf, providersOf, type ProviderName } from '../providers/registry.ts';
import { turnSettings } from '../turns/settings.ts';
import type { StrategyParameters } from '../strategy-parameters.ts';
import type { CallFailure } from '../failure.ts';
import type { SttChoice, TtsChoice, VoicePlan } from './plan.ts';

/** What a strategy that names no voice speaks with: local, no account. */
const DEFAULT_TTS: ProviderName = 'espeak';
/**
 * What a strategy that names no transcriber listens with, the first one the organization can
 * use: a Whisper server when one is named (the operator's WHISPER_BASE_URL, or the
 * organization's credential), then OpenAI's transcription, then Deepgram.
 */
const DEFAULT_STTS: readonly ProviderName[] = ['whisper', 'openai', 'deepgram'];

/** A voice call nothing can hear is refused at start, naming what would make it heard (parley doctor says the same). */
const NO_STT: CallFailure = {
  source: 'stt', statusCode: null,
  message: 'no speech to text for this voice call: set DEEPGRAM_API_KEY (a Deepgram key), OPENAI_API_KEY (an OpenAI key), or WHISPER_BASE_URL (a ' +
    'self-hosted Whisper-compatible server\'s base URL, no key needed), or store a deepgram, openai or whisper provider credential in the organization',
};

/** The transcriber of a strategy that names none: the first of DEFAULT_STTS the organization has access to, else NO_STT. */
async function defaultTranscriber(resolve: ResolveAccess, organizationId: string): Promise<{ provider: string }> {
  for (const provider of DEFAULT_STTS) {
    const access = await resolve(organizationId, provider);
    // A Whisper key without a base URL names no server: it cannot serve.
    if (access && !('baseUrl' in access && access.baseUrl === '')) return { provider };
  }
  return { provider: '' };
}

/** The providers Parley can speak with (a factory in their descriptor), for the message of one it cannot. */
const speaking = () => providersOf('tts').filter((d) => d.tts.open).map((d) => d.name);

/** A voice the call may speak with, or why it cannot (Parley cannot speak with it yet, no key). */
async function ttsChoice(resolve: ResolveAccess, organizationId: string, provider: ProviderName, voice: TtsChoice['voice']): Promise<TtsChoice | CallFailure> {
  const source = `tts:${provider}`;
  const descriptor = descriptorOf(provider);
  if (!descriptor?.tts?.open) return { source, statusCode: null, message: `Parley cannot speak with ${provider} yet; choose ${speaking().join(', ')}` };
  // A local voice (espeak) takes no credential and is reached nowhere.
  const access = descriptor.credential ? await accessFor(resolve, organizationId, provider, source) : { apiKey: null, baseUrl: '' };
  return isFailure(access) ? access : { provider, access, voice };
}

/** A transcriber the call may listen with, or why it cannot (no key). */
async function sttChoice(resolve: ResolveAccess, organizationId: string, transcriber: { provider: string; model?: string; language?: string }): Promise<SttChoice | CallFailure> {
  if (!transcriber.provider) return NO_STT;
  const provider = transcriber.provider as ProviderName;
  const access = await accessFor(resolve, organizationId, provider, `stt:${provider}`);
  if (isFailure(access)) return access;
  return { provider, access, ...(transcriber.model ? { model: transcriber.model } : {}), ...(transcriber.language ? { language: transcriber.language } : {}) };
}

/** Every entry's choice, or the first entry's failure: a fallback without a key fails the call at start as the primary would. */
async function every<T, C>(entries: readonly T[], choose: (entry: T) => Promise<C | CallFailure>): Promise<C[] | CallFailure> {
  const chosen: C[] = [];
  for (const entry of entries) {
    const choice = await choose(entry);
    if (choice && typeof choice === 'object' && 'source' in choice) return choice;
    chosen.push(choice);
  }
  return chosen;
}

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
  if (strategy?.type === 'speech_to_speech') {
    const realtime = providersOf('realtime')[0]!.name;
    const access = await accessFor(resolve, organizationId, realtime, `realtime:${realtime}`);
    if (isFailure(access)) return { kind: 'unusable', audio: format, failure: access };
    const { confidenceThreshold, stopDuration, backbufferDuration } = parameters.vad ?? {};
    const turn = turnSettings(parameters.turn);
    return {
      kind: 'realtime', provider: realtime, audio: format, access, voice: { ...voiceFields, ...(parameters.outputSampleRate ? { outputSampleRate: parameters.outputSampleRate } : {}) },
      model: parameters.model ?? DEFAULT_REALTIME_MODEL,
      turns: turn.endpointing === 'smart' ? { detection: 'semantic', eagerness: eagernessFor(turn.maxSilence) } : { detection: 'silence' },
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
  const rate = parameters.outputSampleRate ? { outputSampleRate: parameters.outputSampleRate } : {};
  const voices = [{ provider: voiceProvider ?? DEFAULT_TTS, ...voiceFields }, ...(parameters.fallbacks?.tts ?? [])];
  const tts = await every(voices, ({ provider, ...fields }) => ttsChoice(resolve, organizationId, provider as ProviderName, { ...fields, ...rate }));
  if (!Array.isArray(tts)) return { kind: 'unusable', audio: format, failure: tts };
  const transcribers = [parameters.transcriber ?? await defaultTranscriber(resolve, organizationId), ...(parameters.fallbacks?.stt ?? [])];
  const stt = await every(transcribers, (transcriber) => sttChoice(resolve, organizationId, transcriber));
  if (!Array.isArray(stt)) return { kind: 'unusable', audio: format, failure: stt };
  const [ttsPrimary, ...ttsFallbacks] = tts as [TtsChoice, ...TtsChoice[]];
  const [sttPrimary, ...sttFallbacks] = stt as [SttChoice, ...SttChoice[]];
  return {
    kind: 'pipeline', audio: format, vad, turn: turnSettings(parameters.turn), tts: ttsPrimary, stt: sttPrimary,
    ...(ttsFallbacks.length || sttFallbacks.length ? { fallbacks: { tts: ttsFallbacks, stt: sttFallbacks } } : {}),
  };
}

/**
 * The semantic VAD's eagerness for a strategy's maxSilence: its longest waits are 2 s (high),
 * 4 s (medium) and 8 s (low), so the one whose wait is not longer than maxSilence allows.
 */
export function eagernessFor(maxSilence: number): 'low' | 'medium' | 'high' {
  return maxSilence <= 2 ? 'high' : maxSilence <= 4 ? 'medium' : 'low';
}
