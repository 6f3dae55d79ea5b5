import type { LookupFunction } from 'node:net';
/**
 * Text to speech behind one small interface. A session is opened per call and speaks sentence
 * after sentence of the assistant's answers; it keeps its provider connection open across
 * sentences, so only the first sentence of a call pays for a handshake.
 */

/** A strategy's `voice` parameters (the provider is chosen by name, outside these settings). */
export interface VoiceSettings {
  voiceId?: string;
  modelId?: string;
  /** 0.25..4; 1 is the provider's normal rate. Each provider clamps it to what it accepts. */
  speed?: number;
  stability?: number;
  similarityBoost?: number;
  style?: number;
  useSpeakerBoost?: boolean;
  /** The rate asked of providers that can produce several; others answer in their own rate. */
  outputSampleRate?: number;
}

export interface TtsOptions {
  /** Null for servers that take no key (local OpenAI-compatible servers, espeak). */
  apiKey: string | null;
  baseUrl: string;
  voice: VoiceSettings;
  /** Aborting it gives up opening the session. */
  signal: AbortSignal;
  /** Resolves the provider's host when its base URL came from a tenant (the egress policy judges each address). */
  lookup?: LookupFunction | undefined;
}

/** Mono PCM16 samples at `sampleRate`. */
export interface TtsChunk {
  pcm: Int16Array;
  sampleRate: number;
}

export interface TtsSession {
  readonly provider: string;
  /**
   * Synthesises one sentence; PCM16 mono chunks as they arrive, at `sampleRate`. Aborting
   * `signal` stops it at once (barge-in): the iterator ends, nothing more is yielded, and the
   * connection stays usable for the next sentence.
   */
  synthesize(text: string, signal: AbortSignal): AsyncIterable<TtsChunk>;
  /** Idempotent; leaves no socket or timer behind. */
  close(): Promise<void>;
}

/** One provider's text to speech; src/calls/providers/ says which providers exist. */
export interface TtsProvider {
  readonly name: string;
  open(options: TtsOptions): Promise<TtsSession>;
}

/** A provider refused or failed. The message is ours or the provider's, never holding a key. */
export class TtsError extends Error {
  readonly provider: string;
  readonly statusCode: number | undefined;
  constructor(provider: string, message: string, statusCode?: number) {
    super(`${provider}: ${message}`);
    this.name = 'TtsError';
    this.provider = provider;
    this.statusCode = statusCode;
  }
}

/**
 * Provider error text made safe to log: OpenAI, for one, quotes a refused key half-masked
 * ("Incorrect API key provided: sk-proj-****abcd"). The key itself and anything shaped like a
 * key are cut out.
 */
export function scrubSecrets(text: string, secret: string | null): string {
  let out = secret ? text.split(secret).join('[redacted]') : text;
  out = out.replace(/\b(sk|sk_car|xi|key|Bearer)[-_ ][A-Za-z0-9*._-]{6,}/g, '[redacted]');
  return out;
}
