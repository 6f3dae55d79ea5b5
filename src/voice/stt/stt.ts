import type { LookupFunction } from 'node:net';
/** Speech-to-text behind one small interface; one file per provider beside this one (src/calls/providers/ says which exist). */

export interface SttOptions {
  /** null for servers that take no key (self-hosted Whisper); then no credential header is sent. */
  apiKey: string | null;
  baseUrl: string;
  model?: string;
  language?: string;
  /** The call's signal: when it aborts, the session closes itself. */
  signal: AbortSignal;
  /** Resolves the provider's host when its base URL came from a tenant (the egress policy judges each address). */
  lookup?: LookupFunction | undefined;
}

export interface SttSession {
  /** Audio of the current utterance (from speech_start on), PCM16 mono at 16 kHz. */
  write(pcm16k: Int16Array): void;
  /** The utterance is over: its final text ('' if none). Rejects with SttError. */
  endUtterance(): Promise<string>;
  /**
   * Providers without interim hypotheses: the text of the utterance so far, without ending it
   * (smart endpointing reads it at each pause). Streaming providers leave this out: their
   * `onInterim` is the text so far.
   */
  preview?(): Promise<string>;
  /** The utterance's text so far, when the provider gives interim hypotheses. */
  onInterim?: (text: string) => void;
  /** The provider's own end-of-speech signal for the utterance, when it has one (Deepgram's speech_final). */
  onSpeechFinal?: () => void;
  /**
   * A streaming session failed on its own (its socket dropped): told at once, since nothing may
   * ask it for a result soon (a pause with no words yet ends no turn). The next endUtterance
   * rejects with the same error.
   */
  onError?: (error: SttError) => void;
  /** Idempotent; leaves no socket or timer behind. */
  close(): Promise<void>;
}

export interface SttProvider {
  readonly name: string;
  open(options: SttOptions): Promise<SttSession>;
}

/**
 * A provider refused or failed. The message never holds a key: providers' own error texts can
 * echo part of it, so only status codes, close codes and short error codes are kept.
 */
export class SttError extends Error {
  override readonly name = 'SttError';
  constructor(
    readonly provider: string,
    message: string,
    readonly statusCode?: number,
  ) {
    super(message);
  }
}

/** A short machine code from a provider's error (`invalid_api_key`, `NET-0001`), or nothing. */
export function errorCode(value: unknown): string | undefined {
  return typeof value === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(value) ? value : undefined;
}
