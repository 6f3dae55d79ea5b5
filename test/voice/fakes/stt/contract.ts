/**
 * What every fake STT provider offers the shared tests (test/voice/stt-conformance.test.ts): one
 * module per provider of the registry, `fakes/stt/<name>.ts`, exporting `startSttFake`. The fake
 * speaks the provider's documented protocol and checks what it receives; this is only its handle.
 */
export interface SttFakeOptions {
  apiKey: string;
  model: string;
  language: string;
}

export interface SttFake {
  /** A credential's baseUrl that reaches the fake. */
  baseUrl: string;
  /** What the next utterances are heard as. */
  setTranscript(text: string): void;
  /** Every sample of audio the fake has received, in order. */
  receivedAudio(): Int16Array;
  /** The provider fails the session's next utterance (a server close, an error status). */
  failNextUtterance(): void;
  /** The next utterance gets no answer until the client gives up or closes. */
  hangNextUtterance(): void;
  /** Connections the fake still has open (sockets, keep-alive HTTP). */
  openConnections(): number;
  waitFor(predicate: () => boolean, what: string): Promise<void>;
  /** What the fake found wrong in what it received. */
  problems(): readonly string[];
  close(): Promise<void>;
}

export interface SttFakeModule {
  readonly startSttFake: (options: SttFakeOptions) => Promise<SttFake>;
}
