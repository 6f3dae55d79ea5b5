import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { runCli } from '../../src/cli/program.ts';
import { DIALECTS, createTestDatabase, type TestDatabase } from '../helpers/dialects.ts';
import { startLlmServer, type LlmServer } from '../calls/support/llm-server.ts';

/** Runs `parley doctor` in this process with the environment given (nothing of process.env). */
async function doctor(env: Record<string, string>): Promise<{ code: number | 'running'; out: string }> {
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  const code = await runCli(['doctor'], { stdout, stderr: new PassThrough(), stdin: new PassThrough(), env });
  return { code, out };
}

/**
 * A fake of a self-hosted Whisper-compatible server (speaches, formerly faster-whisper-server):
 * `GET /v1/models` lists its models; `POST /v1/audio/transcriptions` without a file is refused
 * with 422, as its FastAPI validation does; it takes no key. It records the Authorization headers.
 */
async function startWhisperFake(): Promise<{ url: string; authorizations: (string | undefined)[]; close(): Promise<void> }> {
  const authorizations: (string | undefined)[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      authorizations.push(req.headers.authorization);
      res.setHeader('content-type', 'application/json');
      if (req.method === 'GET' && req.url === '/v1/models') return void res.end(JSON.stringify({ object: 'list', data: [{ id: 'Systran/faster-whisper-small', object: 'model' }] }));
      if (req.method === 'POST' && req.url === '/v1/audio/transcriptions') {
        return void res.writeHead(422).end(JSON.stringify({ detail: [{ type: 'missing', loc: ['body', 'file'], msg: 'Field required', input: null }] }));
      }
      res.writeHead(404).end(JSON.stringify({ detail: 'Not Found' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    authorizations,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

for (const dialect of DIALECTS) {
  describe(`parley doctor checks the speech a strategy naming none would use (${dialect})`, () => {
    let database: TestDatabase;
    let whisper: Awaited<ReturnType<typeof startWhisperFake>>;
    let llm: LlmServer;
    let base: Record<string, string>;
    before(async () => {
      database = await createTestDatabase(dialect);
      whisper = await startWhisperFake();
      llm = await startLlmServer();
      base = { DATABASE_URL: database.url, ...(dialect === 'postgres' ? { PARLEY_SECRET_KEY: randomBytes(32).toString('base64') } : {}) };
    });
    after(async () => {
      await whisper.close();
      await llm.close();
      await database.drop();
    });

    it('nothing configured: the demo model is a warning, the missing STT fails naming the options', { timeout: 30_000 }, async () => {
      const ran = await doctor(base);
      assert.equal(ran.code, 1, ran.out);
      assert.match(ran.out, /^WARN {2}llm +the built-in demo model \(neither OPENAI_BASE_URL nor OPENAI_API_KEY is set\)/m);
      assert.match(ran.out, /^FAIL {2}stt +none: voice calls of strategies naming no transcriber are refused at start .*DEEPGRAM_API_KEY \(a Deepgram key\), OPENAI_API_KEY \(an OpenAI key\), or WHISPER_BASE_URL \(a self-hosted Whisper-compatible server's base URL, no key needed\)/m);
      assert.match(ran.out, /^OK {4}tts +eSpeak NG, built in/m);
    });

    it('an LLM-only server as OPENAI_BASE_URL (no transcription endpoint) fails the STT check', { timeout: 30_000 }, async () => {
      const ran = await doctor({ ...base, OPENAI_BASE_URL: llm.baseUrl });
      assert.equal(ran.code, 1, ran.out);
      assert.match(ran.out, /^OK {4}llm /m);
      assert.match(ran.out, new RegExp(`^FAIL  stt +OPENAI_BASE_URL ${llm.baseUrl} \\(no key\\) does not transcribe \\(POST /audio/transcriptions answered HTTP 404`, 'm'));
    });

    it('a Whisper-compatible base URL without a key passes beside the demo model, and no key is sent to it', { timeout: 30_000 }, async () => {
      const from = whisper.authorizations.length;
      const ran = await doctor({ ...base, WHISPER_BASE_URL: whisper.url });
      assert.equal(ran.code, 0, ran.out);
      assert.match(ran.out, /^WARN {2}llm +the built-in demo model/m);
      assert.match(ran.out, new RegExp(`^OK {4}stt +WHISPER_BASE_URL ${whisper.url} \\(no key\\) transcribes \\(POST /audio/transcriptions answered HTTP 422`, 'm'));
      assert.deepEqual(whisper.authorizations.slice(from), [undefined]);
    });

    it('a server doing both chat and transcription as a keyless OPENAI_BASE_URL passes too', { timeout: 30_000 }, async () => {
      const ran = await doctor({ ...base, OPENAI_BASE_URL: whisper.url });
      assert.equal(ran.code, 0, ran.out);
      assert.match(ran.out, new RegExp(`^OK {4}stt +OPENAI_BASE_URL ${whisper.url} \\(no key\\) transcribes`, 'm'));
    });

    it('a Deepgram key alone passes: strategies naming no transcriber then listen with Deepgram', { timeout: 30_000 }, async () => {
      const ran = await doctor({ ...base, DEEPGRAM_API_KEY: 'dg-doctor-secret-0123456789' });
      assert.equal(ran.code, 0, ran.out);
      assert.match(ran.out, /^OK {4}stt +deepgram with DEEPGRAM_API_KEY/m);
      assert.doesNotMatch(ran.out, /doctor-secret/);
    });
  });
}
