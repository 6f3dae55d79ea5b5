/**
 * A fake Cartesia TTS WebSocket (`/tts/websocket`) on 127.0.0.1. It checks `X-API-Key` and
 * `Cartesia-Version`, every generation request field by field (model_id, transcript, voice,
 * output_format, context_id, continue, generation_config) and cancel messages, and answers with
 * espeak-ng speech as `chunk` messages, then `done`, per context.
 */
import type { WebSocket } from 'ws';
import { concatPcm, pcmBytes, speak } from './audio.ts';
import { delay, messageText, sameKeys, startFakeServer, Violations } from './server.ts';

export interface CartesiaExpectations {
  apiKey: string;
  version: string;
  modelId: string;
  voiceId: string;
  sampleRate: number;
  /** Exactly the generation_config each request must carry (undefined: none). */
  generationConfig?: Record<string, unknown>;
}

export interface CartesiaFake {
  url: string;
  violations: Violations;
  handshakes: { path: string; headers: Record<string, string | string[] | undefined> }[];
  requests: Record<string, unknown>[];
  cancels: string[];
  sent: { contextId: string; transcript: string; pcm: Int16Array; chunks: number }[];
  chunkSamples: number;
  chunkIntervalMs: number;
  dropAfterChunks: number | null;
  /** The next generation request is answered with this status in an error message, as Cartesia fails one. */
  failNextWith: number | null;
  close(): Promise<void>;
}

export async function startCartesiaFake(expect: CartesiaExpectations): Promise<CartesiaFake> {
  const violations = new Violations();
  const fake: Omit<CartesiaFake, 'url' | 'close'> = {
    violations, handshakes: [], requests: [], cancels: [], sent: [], chunkSamples: 2048, chunkIntervalMs: 2, dropAfterChunks: null, failNextWith: null,
  };
  const server = await startFakeServer({
    upgrade(req) {
      const url = new URL(req.url ?? '/', 'http://fake');
      fake.handshakes.push({ path: url.pathname, headers: req.headers });
      if (req.headers['x-api-key'] !== expect.apiKey) return 401;
      if (url.pathname !== '/tts/websocket') violations.add(`path ${url.pathname}`);
      if (req.headers['cartesia-version'] !== expect.version) violations.add(`Cartesia-Version ${String(req.headers['cartesia-version'])}`);
      return null;
    },
    connection(socket) {
      const cancelled = new Set<string>();
      socket.on('message', (data) => {
        let message: Record<string, unknown>;
        try {
          message = JSON.parse(messageText(data)) as Record<string, unknown>;
        } catch {
          return violations.add('a message that is not JSON');
        }
        const contextId = String(message.context_id);
        if (message.cancel === true) {
          const wrong = sameKeys(message, ['context_id', 'cancel'], ['context_id', 'cancel']);
          if (wrong) violations.add(`cancel: ${wrong}`);
          fake.cancels.push(contextId);
          cancelled.add(contextId);
          return;
        }
        fake.requests.push(message);
        const problems = checkRequest(message, expect);
        if (problems.length > 0) {
          for (const problem of problems) violations.add(problem);
          socket.send(JSON.stringify({ type: 'error', done: true, status_code: 400, context_id: contextId, title: 'Invalid request', message: problems.join('; ') }));
          return;
        }
        if (fake.failNextWith !== null) {
          socket.send(JSON.stringify({ type: 'error', done: true, status_code: fake.failNextWith, context_id: contextId, title: 'Internal server error', message: 'The generation failed; try again' }));
          fake.failNextWith = null;
          return;
        }
        void generate(socket, contextId, String(message.transcript), cancelled);
      });
    },
  });

  async function generate(socket: WebSocket, contextId: string, transcript: string, cancelled: Set<string>) {
    const pcm = await speak(transcript, expect.sampleRate);
    const record: CartesiaFake['sent'][number] = { contextId, transcript, pcm: new Int16Array(0), chunks: 0 };
    fake.sent.push(record);
    const parts: Int16Array[] = [];
    for (let offset = 0; offset < pcm.length; offset += fake.chunkSamples) {
      if (socket.readyState !== socket.OPEN || cancelled.has(contextId)) return;
      if (fake.dropAfterChunks !== null && record.chunks >= fake.dropAfterChunks) {
        fake.dropAfterChunks = null;
        socket.terminate();
        return;
      }
      const chunk = pcm.subarray(offset, offset + fake.chunkSamples);
      socket.send(JSON.stringify({ type: 'chunk', data: pcmBytes(chunk).toString('base64'), done: false, status_code: 206, step_time: 1, context_id: contextId }));
      parts.push(chunk);
      record.pcm = concatPcm(parts);
      record.chunks++;
      await delay(fake.chunkIntervalMs);
    }
    socket.send(JSON.stringify({ type: 'done', done: true, status_code: 206, context_id: contextId }));
  }

  return Object.assign(fake, { url: `ws://127.0.0.1:${server.port}`, close: () => server.close() });
}

function checkRequest(message: Record<string, unknown>, expect: CartesiaExpectations): string[] {
  const problems: string[] = [];
  const wrong = sameKeys(message, ['model_id', 'transcript', 'voice', 'output_format', 'context_id', 'continue', 'generation_config', 'language'], ['model_id', 'transcript', 'voice', 'output_format', 'context_id']);
  if (wrong) problems.push(wrong);
  if (message.model_id !== expect.modelId) problems.push(`model_id ${String(message.model_id)}`);
  if (JSON.stringify(message.voice) !== JSON.stringify({ mode: 'id', id: expect.voiceId })) problems.push(`voice ${JSON.stringify(message.voice)}`);
  const format = { container: 'raw', encoding: 'pcm_s16le', sample_rate: expect.sampleRate };
  if (JSON.stringify(message.output_format) !== JSON.stringify(format)) problems.push(`output_format ${JSON.stringify(message.output_format)}`);
  if (JSON.stringify(message.generation_config) !== JSON.stringify(expect.generationConfig)) problems.push(`generation_config ${JSON.stringify(message.generation_config)}`);
  if (typeof message.transcript !== 'string' || message.transcript === '') problems.push('transcript');
  if (typeof message.context_id !== 'string' || message.context_id === '') problems.push('context_id');
  if (message.continue !== false) problems.push(`continue ${String(message.continue)} for a whole sentence`);
  return problems;
}
