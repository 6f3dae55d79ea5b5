import { openContextSession, type ContextEvent, type ContextProtocol } from './context-socket.ts';
import { pcm16FromBytes } from './pcm.ts';
import { webSocketBase } from './socket.ts';
import type { TtsOptions, TtsProvider, TtsSession } from './types.ts';

/**
 * Cartesia's TTS WebSocket (`/tts/websocket`). Each sentence is one generation request in its
 * own `context_id` with `continue: false` (the whole sentence is known), so a barge-in cancels
 * that context alone and the socket goes on serving the next sentence.
 */
export const DEFAULT_CARTESIA_BASE_URL = 'wss://api.cartesia.ai';
export const CARTESIA_VERSION = '2025-04-16';
export const DEFAULT_CARTESIA_MODEL = 'sonic-3';
/** The voice of Cartesia's own API examples ("Barbershop Man"), for a strategy that names none. */
export const DEFAULT_CARTESIA_VOICE = 'a0e99841-438c-4a64-b679-ae501e7d6091';

const RATES = [8000, 16000, 22050, 24000, 44100, 48000] as const;

export function cartesiaSampleRate(requested: number | undefined): number {
  if (requested === undefined) return 24000;
  return RATES.find((rate) => rate >= requested) ?? 48000;
}

export function cartesiaProtocol(options: Pick<TtsOptions, 'apiKey' | 'baseUrl' | 'voice' | 'lookup'>): ContextProtocol {
  const { voice } = options;
  const sampleRate = cartesiaSampleRate(voice.outputSampleRate);
  const request = {
    model_id: voice.modelId ?? DEFAULT_CARTESIA_MODEL,
    voice: { mode: 'id', id: voice.voiceId ?? DEFAULT_CARTESIA_VOICE },
    output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: sampleRate },
    // Sonic 3 takes speed in generation_config, 0.6..1.5.
    ...(voice.speed !== undefined ? { generation_config: { speed: Math.min(1.5, Math.max(0.6, voice.speed)) } } : {}),
  };
  return {
    provider: 'cartesia',
    url: `${webSocketBase(options.baseUrl)}/tts/websocket`,
    secret: options.apiKey,
    headers: { 'Cartesia-Version': CARTESIA_VERSION, ...(options.apiKey ? { 'X-API-Key': options.apiKey } : {}) },
    lookup: options.lookup,
    start: (text, contextId) => [{ ...request, transcript: text.trim(), context_id: contextId, continue: false }],
    cancel: (contextId) => ({ context_id: contextId, cancel: true }),
    parse: (message) => parseCartesia(message, sampleRate),
  };
}

function parseCartesia(message: unknown, sampleRate: number): ContextEvent {
  if (typeof message !== 'object' || message === null) return { kind: 'ignore' };
  const m = message as { type?: unknown; data?: unknown; context_id?: unknown; status_code?: unknown; error?: unknown; message?: unknown; title?: unknown };
  const contextId = typeof m.context_id === 'string' ? m.context_id : null;
  if (m.type === 'chunk' && typeof m.data === 'string' && contextId) {
    return { kind: 'audio', contextId, chunk: { pcm: pcm16FromBytes(Buffer.from(m.data, 'base64')), sampleRate } };
  }
  if (m.type === 'done' && contextId) return { kind: 'done', contextId };
  if (m.type === 'error') {
    const text = [m.title, m.message, m.error].filter((part) => typeof part === 'string').join(': ') || 'error';
    const statusCode = typeof m.status_code === 'number' && m.status_code >= 400 ? m.status_code : undefined;
    return { kind: 'error', contextId, message: text, statusCode };
  }
  return { kind: 'ignore' }; // timestamps, flush_done
}

export const cartesiaTts: TtsProvider = {
  name: 'cartesia',
  open: (options: TtsOptions): Promise<TtsSession> => openContextSession(cartesiaProtocol(options), options.signal),
};
