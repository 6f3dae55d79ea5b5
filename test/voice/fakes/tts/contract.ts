/**
 * What every fake TTS provider offers the shared tests (test/voice/tts-conformance.test.ts and
 * the call tests parameterised over the TTS providers): one module per provider of the registry,
 * `fakes/tts/<name>.ts`, exporting `startTtsFake`. The fake itself speaks the provider's
 * documented protocol byte for byte and checks what it receives; this is only its handle.
 */
import type { VoiceSettings } from '../../../../src/voice/tts/types.ts';

export interface TtsFakeOptions {
  apiKey: string;
  /** The strategy's outputSampleRate; the fake answers in the rate the provider would for it. */
  outputSampleRate: number;
}

export interface TtsFake {
  /** A credential's baseUrl that reaches the fake. */
  baseUrl: string;
  /** The strategy's voice fields (without provider) the fake expects, field for field. */
  voice: VoiceSettings;
  /** The rate the fake's audio is in. */
  sampleRate: number;
  /** Every sentence the fake spoke, in order: its text and every sample it sent of it. */
  sent(): readonly { text: string; pcm: Int16Array }[];
  /** Milliseconds between audio messages (so a test can cut a sentence in its middle). */
  pace(ms: number): void;
  /** The next sentence fails before any audio, the way the provider fails one (an error status or message). */
  failNextSentence(): void;
  /** The connection drops after this many audio messages of the next sentence. */
  dropAfterChunks(count: number): void;
  /** What the fake found wrong in what it received; empty when the client spoke the protocol. */
  violations(): readonly string[];
  close(): Promise<void>;
}

export interface TtsFakeModule {
  readonly startTtsFake: (options: TtsFakeOptions) => Promise<TtsFake>;
}
