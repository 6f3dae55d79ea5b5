/**
 * A fake OpenAI `POST /v1/audio/speech` on 127.0.0.1. It checks the bearer key (or its absence
 * for a keyless server), the JSON body field by field, and answers `response_format: "pcm"` as
 * OpenAI does: raw 24 kHz PCM16LE, chunked, made by espeak-ng from the requested input.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pcmBytes, speak } from './audio.ts';
import { delay, sameKeys, startFakeServer, Violations } from './server.ts';

export interface SpeechExpectations {
  /** null: the server takes no key and the request must carry no Authorization header. */
  apiKey: string | null;
  model: string;
  voice: string;
  speed?: number;
}

export interface OpenAiSpeechFake {
  url: string;
  violations: Violations;
  requests: { headers: IncomingMessage['headers']; body: Record<string, unknown> }[];
  /** The PCM each successful request was answered with. */
  sent: { input: string; pcm: Int16Array }[];
  chunkBytes: number;
  chunkIntervalMs: number;
  /** Answer the next request with this status and OpenAI's error JSON. */
  failNextWith: number | null;
  /** Cut the connection after this many body chunks of the next answer. */
  dropAfterChunks: number | null;
  close(): Promise<void>;
}

export async function startOpenAiSpeechFake(expect: SpeechExpectations): Promise<OpenAiSpeechFake> {
  const violations = new Violations();
  const fake: Omit<OpenAiSpeechFake, 'url' | 'close'> = {
    violations, requests: [], sent: [], chunkBytes: 4800, chunkIntervalMs: 2, failNextWith: null, dropAfterChunks: null,
  };

  async function handle(req: IncomingMessage, res: ServerResponse) {
    let raw = '';
    for await (const chunk of req) raw += String(chunk);
    const fail = (status: number, message: string) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message, type: 'invalid_request_error', code: null } }));
    };
    if (req.method !== 'POST' || req.url !== '/v1/audio/speech') {
      violations.add(`${req.method} ${req.url}`);
      return fail(404, 'not found');
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      violations.add('a body that is not JSON');
      return fail(400, 'bad json');
    }
    fake.requests.push({ headers: req.headers, body });
    const expectedAuth = expect.apiKey === null ? undefined : `Bearer ${expect.apiKey}`;
    if (req.headers.authorization !== expectedAuth) {
      // OpenAI quotes a wrong key half-masked; the client must not pass that on.
      return fail(401, `Incorrect API key provided: ${maskKey(String(req.headers.authorization ?? '').replace('Bearer ', ''))}. You can find your API key at https://platform.openai.com/account/api-keys.`);
    }
    if (fake.failNextWith !== null) {
      const status = fake.failNextWith;
      fake.failNextWith = null;
      return fail(status, 'The server had an error while processing your request.');
    }
    if (!String(req.headers['content-type']).startsWith('application/json')) violations.add(`content-type ${req.headers['content-type']}`);
    const wrong = sameKeys(body, ['model', 'voice', 'input', 'response_format', 'speed'], ['model', 'voice', 'input', 'response_format']);
    if (wrong) violations.add(wrong);
    if (body.model !== expect.model) violations.add(`model ${String(body.model)}`);
    if (body.voice !== expect.voice) violations.add(`voice ${String(body.voice)}`);
    if (body.response_format !== 'pcm') violations.add(`response_format ${String(body.response_format)}`);
    if (body.speed !== expect.speed) violations.add(`speed ${String(body.speed)}, expected ${String(expect.speed)}`);
    if (typeof body.input !== 'string' || body.input === '') violations.add('input');
    if (violations.list.length > 0) return fail(400, violations.list.join('; '));

    const pcm = await speak(body.input as string, 24000);
    fake.sent.push({ input: body.input as string, pcm });
    const bytes = pcmBytes(pcm);
    res.writeHead(200, { 'content-type': 'audio/pcm', 'transfer-encoding': 'chunked' });
    let chunks = 0;
    // Odd chunk sizes: a network chunk may end in the middle of a sample.
    for (let offset = 0; offset < bytes.length; offset += fake.chunkBytes + 1) {
      if (res.destroyed) return;
      if (fake.dropAfterChunks !== null && chunks >= fake.dropAfterChunks) {
        fake.dropAfterChunks = null;
        res.socket?.destroy();
        return;
      }
      res.write(bytes.subarray(offset, offset + fake.chunkBytes + 1));
      chunks++;
      await delay(fake.chunkIntervalMs);
    }
    res.end();
  }

  const server = await startFakeServer({ http: (req, res) => void handle(req, res) });
  return Object.assign(fake, { url: `http://127.0.0.1:${server.port}/v1`, close: () => server.close() });
}

function maskKey(key: string): string {
  return key.length > 8 ? `${key.slice(0, 3)}${'*'.repeat(key.length - 7)}${key.slice(-4)}` : '***';
}
