/**
 * A fake ElevenLabs multi-context TTS WebSocket (`/v1/text-to-speech/{voice_id}/multi-stream-input`)
 * on 127.0.0.1. It checks the handshake (`xi-api-key`, `model_id`, `output_format`) and every
 * message against ElevenLabs' published message shapes, and answers with espeak-ng speech in the
 * requested PCM format, base64 in `{ audio, contextId }` messages, then `{ isFinal, contextId }`.
 */
import type { WebSocket } from 'ws';
import { concatPcm, pcmBytes, speak } from './audio.ts';
import { delay, messageText, sameKeys, startFakeServer, Violations } from './server.ts';

export interface ElevenLabsExpectations {
  apiKey: string;
  voiceId: string;
  modelId: string;
  outputFormat: string;
  /** Exactly the `voice_settings` the first message of each context must carry (undefined: none). */
  voiceSettings?: Record<string, unknown>;
}

export interface SentSentence {
  contextId: string;
  text: string;
  sampleRate: number;
  /** Every sample the fake sent for it, in order. */
  pcm: Int16Array;
  chunks: number;
  /** The fake's own time from the sentence's text being complete to its first audio message (benchmarks subtract it). */
  firstAudioDelayMs: number;
  /** performance.now() when the sentence's text was complete: none of its audio can be heard before. */
  requestedAt: number;
}

export interface ElevenLabsFake {
  url: string;
  violations: Violations;
  handshakes: { path: string; query: Record<string, string>; headers: Record<string, string | string[] | undefined> }[];
  messages: Record<string, unknown>[];
  sent: SentSentence[];
  /** Samples per audio message. */
  chunkSamples: number;
  /** Pause between audio messages, so a client can cut a sentence off in its middle. */
  chunkIntervalMs: number;
  /** A fixed wait before each sentence's first audio (benchmarks state it and subtract it). */
  firstChunkDelayMs: number;
  /** Drop the connection after this many audio messages of the next sentence. */
  dropAfterChunks: number | null;
  /** The next flushed context gets this error message instead of audio, and the socket closes (1008), as ElevenLabs does. */
  failNext: string | null;
  close(): Promise<void>;
}

const PATH = /^\/v1\/text-to-speech\/([^/]+)\/multi-stream-input$/;

export async function startElevenLabsFake(expect: ElevenLabsExpectations): Promise<ElevenLabsFake> {
  const violations = new Violations();
  const fake: Omit<ElevenLabsFake, 'url' | 'close'> = {
    violations, handshakes: [], messages: [], sent: [], chunkSamples: 2048, chunkIntervalMs: 2, firstChunkDelayMs: 0, dropAfterChunks: null, failNext: null,
  };
  const sampleRate = Number(expect.outputFormat.replace('pcm_', ''));

  const server = await startFakeServer({
    upgrade(req) {
      const url = new URL(req.url ?? '/', 'http://fake');
      fake.handshakes.push({ path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers });
      if (req.headers['xi-api-key'] !== expect.apiKey) return 401;
      const voice = PATH.exec(url.pathname)?.[1];
      if (voice === undefined) violations.add(`wrong path ${url.pathname}`);
      else if (decodeURIComponent(voice) !== expect.voiceId) violations.add(`voice ${voice}, expected ${expect.voiceId}`);
      if (url.searchParams.get('model_id') !== expect.modelId) violations.add(`model_id ${url.searchParams.get('model_id')}`);
      if (url.searchParams.get('output_format') !== expect.outputFormat) violations.add(`output_format ${url.searchParams.get('output_format')}`);
      return null;
    },
    connection(socket) {
      const contexts = new Map<string, { text: string; flushed: boolean; closed: boolean }>();
      const violate = (message: string) => {
        violations.add(message);
        socket.send(JSON.stringify({ message, error: 'invalid_request', code: 1008 }));
        socket.close(1008, 'protocol violation');
      };
      socket.on('message', (data) => {
        let message: Record<string, unknown>;
        try {
          message = JSON.parse(messageText(data)) as Record<string, unknown>;
        } catch {
          return violate('a message that is not JSON');
        }
        fake.messages.push(message);
        const contextId = message.context_id;
        if (message.close_socket === true) return socket.close(1000);
        if (typeof contextId !== 'string' || contextId === '') return violate('a message without context_id');
        const context = contexts.get(contextId);
        if (!context) {
          // InitialiseContext: text (ending in a space), context_id, voice_settings.
          const wrong = sameKeys(message, ['text', 'context_id', 'voice_settings'], ['text', 'context_id']);
          if (wrong) return violate(`first message of a context: ${wrong}`);
          if (typeof message.text !== 'string' || !message.text.endsWith(' ')) return violate('text must end with a space');
          if (JSON.stringify(message.voice_settings) !== JSON.stringify(expect.voiceSettings)) {
            return violate(`voice_settings ${JSON.stringify(message.voice_settings)}, expected ${JSON.stringify(expect.voiceSettings)}`);
          }
          contexts.set(contextId, { text: message.text, flushed: false, closed: false });
          return;
        }
        if (message.flush === true) {
          const wrong = sameKeys(message, ['context_id', 'flush', 'text'], ['context_id', 'flush']);
          if (wrong) return violate(`flush: ${wrong}`);
          context.flushed = true;
          if (fake.failNext !== null) {
            socket.send(JSON.stringify({ message: fake.failNext, error: 'quota_exceeded', code: 1008 }));
            fake.failNext = null;
            return socket.close(1008, 'quota_exceeded');
          }
          void speakContext(socket, contextId, context);
          return;
        }
        if (message.close_context === true) {
          const wrong = sameKeys(message, ['context_id', 'close_context'], ['context_id', 'close_context']);
          if (wrong) return violate(`close_context: ${wrong}`);
          context.closed = true;
          return;
        }
        if (typeof message.text === 'string') {
          context.text += message.text;
          return;
        }
        violate(`a message the multi-context socket does not know: ${JSON.stringify(message)}`);
      });
    },
  });

  // The same text always sounds the same: synthesise it once (espeak-ng takes tens of milliseconds).
  const spoken = new Map<string, Promise<Int16Array>>();
  async function speakContext(socket: WebSocket, contextId: string, context: { text: string; closed: boolean }) {
    const requestedAt = performance.now();
    const text = context.text.trim();
    if (!spoken.has(text)) spoken.set(text, speak(text, sampleRate));
    const pcm = await (spoken.get(text) as Promise<Int16Array>);
    const wait = requestedAt + fake.firstChunkDelayMs - performance.now();
    if (wait > 0) await delay(wait);
    const record: SentSentence = { contextId, text, sampleRate, pcm: new Int16Array(0), chunks: 0, firstAudioDelayMs: 0, requestedAt };
    fake.sent.push(record);
    const parts: Int16Array[] = [];
    for (let offset = 0; offset < pcm.length; offset += fake.chunkSamples) {
      if (socket.readyState !== socket.OPEN) return;
      if (fake.dropAfterChunks !== null && record.chunks >= fake.dropAfterChunks) {
        fake.dropAfterChunks = null;
        socket.terminate();
        break;
      }
      const chunk = pcm.subarray(offset, offset + fake.chunkSamples);
      socket.send(JSON.stringify({ audio: pcmBytes(chunk).toString('base64'), contextId, alignment: null, normalizedAlignment: null }));
      if (record.chunks === 0) record.firstAudioDelayMs = performance.now() - requestedAt;
      parts.push(chunk);
      record.chunks++;
      record.pcm = concatPcm(parts);
      await delay(fake.chunkIntervalMs);
    }
    // ElevenLabs reports a context final once it was closed and all its audio went out.
    while (!context.closed && socket.readyState === socket.OPEN) await delay(1);
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify({ isFinal: true, contextId }));
  }

  return Object.assign(fake, { url: `ws://127.0.0.1:${server.port}`, close: () => server.close() });
}
