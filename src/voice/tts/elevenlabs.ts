import { openContextSession, type ContextEvent, type ContextProtocol } from './context-socket.ts';
import { pcm16FromBytes } from './pcm.ts';
import { webSocketBase } from './socket.ts';
import type { TtsOptions, TtsProvider, TtsSession, VoiceSettings } from './types.ts';

/**
 * ElevenLabs over its multi-context WebSocket (`/v1/text-to-speech/{voice_id}/multi-stream-input`),
 * the endpoint ElevenLabs built for conversational agents. The single-stream `stream-input`
 * socket ends with its end-of-sequence message, so every sentence after a barge-in would need a
 * new connection; here each sentence is its own context on one socket and is dropped alone.
 */
export const DEFAULT_ELEVENLABS_BASE_URL = 'wss://api.elevenlabs.io';
/** "Rachel", one of ElevenLabs' premade voices, for a strategy that names none. */
export const DEFAULT_ELEVENLABS_VOICE = '21m00Tcm4TlvDq8ikWAM';
export const DEFAULT_ELEVENLABS_MODEL = 'eleven_flash_v2_5';

/** The PCM `output_format`s the multi-context socket offers; other rates take the nearest above or 44.1 kHz. */
const PCM_RATES = [8000, 16000, 22050, 24000, 44100] as const;

export function elevenLabsSampleRate(requested: number | undefined): number {
  if (requested === undefined) return 24000;
  return PCM_RATES.find((rate) => rate >= requested) ?? 44100;
}

/** Our voice settings as ElevenLabs' own `voice_settings`; fields the strategy leaves out are not sent. */
export function elevenLabsVoiceSettings(voice: VoiceSettings): Record<string, number | boolean> | undefined {
  const settings: Record<string, number | boolean> = {};
  if (voice.stability !== undefined) settings.stability = voice.stability;
  if (voice.similarityBoost !== undefined) settings.similarity_boost = voice.similarityBoost;
  if (voice.style !== undefined) settings.style = voice.style;
  if (voice.useSpeakerBoost !== undefined) settings.use_speaker_boost = voice.useSpeakerBoost;
  // ElevenLabs accepts 0.7..1.2 and rejects the rest.
  if (voice.speed !== undefined) settings.speed = Math.min(1.2, Math.max(0.7, voice.speed));
  return Object.keys(settings).length > 0 ? settings : undefined;
}

export function elevenLabsProtocol(options: Pick<TtsOptions, 'apiKey' | 'baseUrl' | 'voice' | 'lookup'>): ContextProtocol {
  const { voice } = options;
  const sampleRate = elevenLabsSampleRate(voice.outputSampleRate);
  const query = new URLSearchParams({
    model_id: voice.modelId ?? DEFAULT_ELEVENLABS_MODEL,
    output_format: `pcm_${sampleRate}`,
    // Whole sentences arrive, so ElevenLabs' chunk schedule would only add latency.
    auto_mode: 'true',
    // The longest ElevenLabs allows: a caller may be silent for a while between answers.
    inactivity_timeout: '180',
  });
  const voiceId = encodeURIComponent(voice.voiceId ?? DEFAULT_ELEVENLABS_VOICE);
  const voiceSettings = elevenLabsVoiceSettings(voice);
  return {
    provider: 'elevenlabs',
    url: `${webSocketBase(options.baseUrl)}/v1/text-to-speech/${voiceId}/multi-stream-input?${query.toString()}`,
    secret: options.apiKey,
    headers: options.apiKey ? { 'xi-api-key': options.apiKey } : {},
    lookup: options.lookup,
    start: (text, contextId) => [
      // The first message opens the context (text must end with a space), flush makes it speak
      // now, and close_context lets it finish that audio and then answer `isFinal`.
      { text: `${text.trim()} `, context_id: contextId, ...(voiceSettings ? { voice_settings: voiceSettings } : {}) },
      { context_id: contextId, flush: true },
      { context_id: contextId, close_context: true },
    ],
    // The context was already closed after its flush; its remaining audio is dropped on arrival.
    cancel: () => null,
    parse: (message) => parseElevenLabs(message, sampleRate),
  };
}

function parseElevenLabs(message: unknown, sampleRate: number): ContextEvent {
  if (typeof message !== 'object' || message === null) return { kind: 'ignore' };
  const m = message as { audio?: unknown; isFinal?: unknown; contextId?: unknown; error?: unknown; message?: unknown; code?: unknown };
  const contextId = typeof m.contextId === 'string' ? m.contextId : null;
  if (typeof m.audio === 'string' && m.audio !== '' && contextId) {
    return { kind: 'audio', contextId, chunk: { pcm: pcm16FromBytes(Buffer.from(m.audio, 'base64')), sampleRate } };
  }
  if (m.isFinal === true && contextId) return { kind: 'done', contextId };
  if (typeof m.error === 'string' || (typeof m.message === 'string' && m.audio === undefined)) {
    const text = [m.error, m.message].filter((part) => typeof part === 'string').join(': ');
    const statusCode = typeof m.code === 'number' && m.code >= 400 && m.code < 600 ? m.code : undefined;
    return { kind: 'error', contextId, message: text, statusCode };
  }
  return { kind: 'ignore' };
}

export const elevenLabsTts: TtsProvider = {
  name: 'elevenlabs',
  async open(options: TtsOptions): Promise<TtsSession> {
    return openContextSession(elevenLabsProtocol(options), options.signal);
  },
};
