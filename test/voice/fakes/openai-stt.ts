/**
 * A fake of OpenAI's transcription endpoint (`POST /v1/audio/transcriptions`, multipart) on
 * 127.0.0.1, for tests. It checks the request exactly (bearer key or none, the form fields,
 * a mono PCM16 16 kHz WAV whose header it reads itself), records the audio, and answers
 * `{ "text": ... }` from a scripted transcript, or with the error asked of it. Every failed
 * check is recorded in `problems` and answered 400.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { concatSamples } from '../../../src/voice/audio/pcm.ts';
import { Waiters } from './waiters.ts';

export interface FakeOpenAiSttOptions {
  /** The key the fake accepts; null: it requires no Authorization header (self-hosted servers). */
  apiKey: string | null;
  /** Expected form values; model and language are required to equal these when given. */
  model?: string;
  language?: string;
}

export interface TranscriptionRequestRecord {
  authorization: string | undefined;
  fields: Record<string, string>;
  fileName: string | undefined;
  audio: Int16Array;
}

export type FakeFailure = { kind: 'status'; status: number } | { kind: 'drop' } | { kind: 'hang' };

export interface FakeOpenAiStt {
  /** The base URL to give the provider (http://127.0.0.1:port/v1). */
  url: string;
  requests: TranscriptionRequestRecord[];
  problems: string[];
  receivedAudio(): Int16Array;
  setTranscript(text: string): void;
  /** The next request fails: an HTTP status with an OpenAI error body, the socket dropped unanswered, or no answer at all. */
  failNext(failure: FakeFailure): void;
  /** TCP connections still open (keep-alive ones included). */
  openConnections(): number;
  /** Requests held unanswered ('hang') whose client is still connected. */
  hanging(): number;
  waitFor(predicate: () => boolean, what: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startFakeOpenAiStt(options: FakeOpenAiSttOptions): Promise<FakeOpenAiStt> {
  const requests: TranscriptionRequestRecord[] = [];
  const problems: string[] = [];
  const waiters = new Waiters();
  let transcript = '';
  let failure: FakeFailure | null = null;
  const held = new Set<ServerResponse>();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const json = (status: number, body: unknown): void => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const apiError = (status: number, message: string, type: string, code: string | null): void => json(status, { error: { message, type, param: null, code } });

    if (req.method !== 'POST' || req.url !== '/v1/audio/transcriptions') return apiError(404, `Unknown request URL: ${req.method} ${req.url}`, 'invalid_request_error', 'unknown_url');
    const authorization = req.headers.authorization;
    const expectedAuth = options.apiKey === null ? undefined : `Bearer ${options.apiKey}`;
    if (authorization !== expectedAuth) {
      // The real API echoes (part of) the key it was given; the fake echoes all of it, so a test can check that it goes no further.
      return apiError(401, `Incorrect API key provided: ${authorization?.replace(/^Bearer /, '') ?? '(none)'}.`, 'invalid_request_error', 'invalid_api_key');
    }
    const contentType = req.headers['content-type'] ?? '';
    if (!contentType.startsWith('multipart/form-data; boundary=')) return bad(`content-type ${contentType}`);
    const form = await new Response(Buffer.concat(chunks), { headers: { 'content-type': contentType } }).formData();
    const fields: Record<string, string> = {};
    let file: File | undefined;
    for (const [name, value] of form) {
      if (typeof value === 'string') fields[name] = value;
      else if (name === 'file') file = value;
      else return bad(`unexpected file field ${name}`);
    }
    const wrong = checkFields(fields, options);
    if (!file) wrong.push('no file');
    else if (!file.name.endsWith('.wav')) wrong.push(`file name ${file.name}`);
    const wav = file ? readStrictWav(Buffer.from(await file.arrayBuffer())) : { problems: [], audio: new Int16Array(0) };
    wrong.push(...wav.problems);
    requests.push({ authorization, fields, fileName: file?.name, audio: wav.audio });
    if (wrong.length) return bad(wrong.join('; '));

    const fail = failure;
    failure = null;
    if (fail?.kind === 'drop') return void req.socket.destroy();
    if (fail?.kind === 'hang') {
      held.add(res);
      res.once('close', () => {
        held.delete(res);
        waiters.changed();
      });
      return;
    }
    if (fail?.kind === 'status') return apiError(fail.status, 'The server had an error while processing your request.', 'server_error', null);
    json(200, { text: transcript });

    function bad(message: string): void {
      problems.push(message);
      apiError(400, message, 'invalid_request_error', null);
    }
  }

  const connections = new Set<Socket>();
  const http = createServer((req, res) => {
    handle(req, res)
      .catch((err: Error) => {
        problems.push(`fake failed: ${err.message}`);
        if (!res.headersSent) res.writeHead(500).end();
      })
      .finally(() => waiters.changed());
  });
  // Idle keep-alive connections stay open until the client closes them, so a test sees a client that never does.
  http.keepAliveTimeout = 0;
  http.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => {
      connections.delete(socket);
      waiters.changed();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    problems,
    receivedAudio: () => concatSamples(requests.map((r) => r.audio)),
    setTranscript: (text) => void (transcript = text),
    failNext: (f) => void (failure = f),
    hanging: () => held.size,
    openConnections: () => connections.size,
    waitFor: (predicate, what, timeoutMs) => waiters.waitFor(predicate, what, timeoutMs),
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

function checkFields(fields: Record<string, string>, options: FakeOpenAiSttOptions): string[] {
  const expected: Record<string, (value: string) => boolean> = {
    model: (v) => (options.model ? v === options.model : v.length > 0),
    response_format: (v) => v === 'json',
    ...(options.language ? { language: (v: string) => v === options.language } : {}),
  };
  const wrong = Object.keys(fields).filter((key) => !(key in expected)).map((key) => `unexpected form field ${key}`);
  for (const [key, ok] of Object.entries(expected)) {
    const value = fields[key];
    if (value === undefined || !ok(value)) wrong.push(`form ${key}=${value ?? '(missing)'}`);
  }
  return wrong;
}

/** Reads the WAV itself (not with Parley's reader) and insists on a canonical mono PCM16 16 kHz file. */
function readStrictWav(file: Buffer): { problems: string[]; audio: Int16Array } {
  const problems: string[] = [];
  const expect = (what: string, actual: unknown, wanted: unknown) => actual !== wanted && problems.push(`WAV ${what} ${String(actual)}, expected ${String(wanted)}`);
  if (file.length < 44) return { problems: [`WAV of ${file.length} bytes`], audio: new Int16Array(0) };
  expect('RIFF tag', file.toString('latin1', 0, 4), 'RIFF');
  expect('RIFF size', file.readUInt32LE(4), file.length - 8);
  expect('WAVE tag', file.toString('latin1', 8, 12), 'WAVE');
  expect('fmt tag', file.toString('latin1', 12, 16), 'fmt ');
  expect('fmt size', file.readUInt32LE(16), 16);
  expect('format', file.readUInt16LE(20), 1);
  expect('channels', file.readUInt16LE(22), 1);
  expect('sample rate', file.readUInt32LE(24), 16000);
  expect('byte rate', file.readUInt32LE(28), 32000);
  expect('block align', file.readUInt16LE(32), 2);
  expect('bits per sample', file.readUInt16LE(34), 16);
  expect('data tag', file.toString('latin1', 36, 40), 'data');
  expect('data size', file.readUInt32LE(40), file.length - 44);
  const audio = new Int16Array((file.length - 44) >> 1);
  for (let i = 0; i < audio.length; i++) audio[i] = file.readInt16LE(44 + 2 * i);
  return { problems, audio };
}
