/**
 * A fake of Deepgram's live transcription WebSocket (`/v1/listen`) on 127.0.0.1, for tests. It
 * checks the handshake exactly (Authorization `Token <key>`, every query parameter), accepts
 * only whole linear16 samples and the documented control messages (KeepAlive, Finalize,
 * CloseStream), records the audio, and answers from a scripted transcript the way Deepgram
 * does: an interim result, an is_final result for the first half of the words once 0.5 s of the
 * utterance has arrived, and the rest in a result marked `from_finalize` when Finalize comes.
 * Like Deepgram it closes a socket that gets neither audio nor KeepAlive for idleTimeoutMs.
 * Every failed check is recorded in `problems` and refuses or closes the connection.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { concatSamples } from '../../../src/voice/audio/pcm.ts';
import { Waiters } from './waiters.ts';

export interface FakeDeepgramOptions {
  /** The key the fake accepts; null: it requires no Authorization header. */
  apiKey: string | null;
  /** Expected query values; model and language are required to equal these when given. */
  model?: string;
  language?: string;
  idleTimeoutMs?: number;
}

export interface DeepgramRequestRecord {
  query: Record<string, string>;
  authorization: string | undefined;
}

export interface FakeDeepgram {
  /** The base URL to give the provider (ws://127.0.0.1:port). */
  url: string;
  requests: DeepgramRequestRecord[];
  /** Control message types received, in order. */
  controls: string[];
  problems: string[];
  /** TCP connections still open, refused ones included. */
  openConnections(): number;
  /** All audio received, on every connection, in order (PCM16 at 16 kHz). */
  receivedAudio(): Int16Array;
  setTranscript(text: string): void;
  /** Several utterances' transcripts: each utterance answered at a Finalize moves on to the next (on any connection). */
  setTranscripts(texts: readonly string[]): void;
  /**
   * Recognition timed from the audio (turn-taking tests): each burst of sound Parley streams (a
   * pause of 120 ms or more between them) is the next phrase of the script (an empty phrase is a
   * sound the STT made no words of); interim results reveal the words in proportion to the audio
   * received against the phrase's `seconds`, and a Finalize answers with every phrase of the
   * utterance. Every result goes out `delayMs` after the audio or the Finalize that caused it (a
   * fixed, stated delay). `setTranscript` ends the script.
   */
  setScript(phrases: readonly { text: string; seconds: number }[], options?: { delayMs?: number }): void;
  /** The phrases of the script not yet used. */
  scriptLeft(): number;
  /** Whether Finalize is answered with a from_finalize result (Deepgram does not promise one). */
  answerFinalize(yes: boolean): void;
  /** The next Finalize only is left unanswered. */
  skipNextFinalize(): void;
  /** Closes every WebSocket from the server side, as Deepgram does on an error. */
  closeConnections(code: number, reason: string): void;
  waitFor(predicate: () => boolean, what: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const RATE = 16000;
const FINAL_AFTER_SECONDS = 0.5;
const INTERIM_AFTER_SECONDS = 0.1;
const CONTROL_TYPES = new Set(['KeepAlive', 'Finalize', 'CloseStream']);
/** Scripted recognition: a chunk this loud (RMS of PCM16) is sound, and this much quiet splits two phrases. */
const LOUD_RMS = 300;
const QUIET_GAP = 0.12;

export async function startFakeDeepgram(options: FakeDeepgramOptions): Promise<FakeDeepgram> {
  const requests: DeepgramRequestRecord[] = [];
  const controls: string[] = [];
  const problems: string[] = [];
  const audio: Int16Array[] = [];
  const sockets = new Set<WebSocket>();
  const connections = new Set<Socket>(); // every TCP connection, refused or upgraded
  const waiters = new Waiters();
  let transcript = '';
  let queued: string[] = [];
  let finalizeAnswered = true;
  let skipFinalize = false;
  let script: { text: string; seconds: number }[] | null = null;
  let scriptDelayMs = 0;

  const http = createServer((_req, res) => res.writeHead(404).end());
  http.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => {
      connections.delete(socket);
      waiters.changed();
    });
  });
  const wss = new WebSocketServer({ noServer: true });
  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'ws://fake');
    const record = { query: Object.fromEntries(url.searchParams), authorization: req.headers.authorization };
    requests.push(record);
    const expectedAuth = options.apiKey === null ? undefined : `Token ${options.apiKey}`;
    if (record.authorization !== expectedAuth) return refuse(socket, 401, 'INVALID_AUTH', 'Invalid credentials.');
    const wrong = [...(url.pathname === '/v1/listen' ? [] : [`path ${url.pathname}`]), ...checkQuery(url.searchParams, options)];
    if (wrong.length) {
      problems.push(...wrong);
      waiters.changed();
      return refuse(socket, 400, 'Bad Request', wrong.join('; '));
    }
    wss.handleUpgrade(req, socket, head, (ws) => serve(ws));
  });

  /**
   * Scripted recognition: the audio of the utterance Parley streams is cut into bursts of sound
   * (a pause of QUIET_GAP or more between them), and the n-th burst is the n-th phrase of the
   * script. Interim results show the phrases heard so far, the last one in proportion to its
   * audio; a Finalize answers with every phrase of the utterance and takes them off the script.
   */
  function serveScript(ws: WebSocket, result: (text: string, start: number, end: number, extra: object) => void) {
    let received = 0;
    let utteranceStart = 0;
    let bursts = 0; // bursts begun in this utterance
    let burstSeconds = 0; // audio of the current burst so far
    let quiet = Infinity; // seconds of quiet since the last loud chunk
    let shown = '';
    const later = (fn: () => void) => setTimeout(() => ws.readyState === ws.OPEN && fn(), scriptDelayMs);
    const textOf = (phrases: { text: string }[]) => phrases.map((p) => p.text).filter(Boolean).join(' ');
    return {
      audio(samples: Int16Array) {
        const seconds = samples.length / RATE;
        received += seconds;
        let energy = 0;
        for (const v of samples) energy += v * v;
        const loud = Math.sqrt(energy / Math.max(1, samples.length)) > LOUD_RMS;
        if (!loud) {
          quiet += seconds;
          if (bursts) burstSeconds += seconds;
          return;
        }
        if (quiet >= QUIET_GAP) {
          bursts++;
          burstSeconds = 0;
        }
        quiet = 0;
        burstSeconds += seconds;
        const heard = script?.slice(0, bursts) ?? [];
        const current = heard.at(-1);
        const words = current?.text.split(/\s+/).filter(Boolean) ?? [];
        const partial = words.slice(0, Math.min(words.length, Math.floor(words.length * burstSeconds / Math.max(0.1, current?.seconds ?? 1)))).join(' ');
        const text = [textOf(heard.slice(0, -1)), partial].filter(Boolean).join(' ');
        if (!text || text === shown) return;
        shown = text;
        const [start, end] = [utteranceStart, received];
        later(() => result(text, start, end, {}));
      },
      finalize() {
        const text = textOf(script?.splice(0, bursts) ?? []);
        const [start, end] = [utteranceStart, received];
        utteranceStart = received;
        bursts = 0;
        burstSeconds = 0;
        quiet = Infinity;
        shown = '';
        later(() => result(text, start, end, { is_final: true, from_finalize: true }));
      },
    };
  }

  function serve(ws: WebSocket): void {
    sockets.add(ws);
    let received = 0; // seconds of audio on this connection
    let utteranceStart = 0;
    let segmentStart = 0; // where the audio not yet in a final result begins
    let sentInterim = false;
    let sentFinal = false;
    let sentSecondInterim = false;
    const words = () => transcript.split(/\s+/).filter(Boolean);
    const half = () => Math.ceil(words().length / 2);
    const result = (text: string, start: number, end: number, extra: object) =>
      ws.send(JSON.stringify({
        type: 'Results', channel_index: [0, 1], duration: end - start, start, is_final: false, speech_final: false,
        channel: { alternatives: [{ transcript: text, confidence: text ? 0.98 : 0, words: [] }] },
        metadata: { request_id: randomUUID(), model_info: { name: 'fake', version: '0', arch: 'fake' }, model_uuid: randomUUID() },
        ...extra,
      }));
    const idle = setTimeout(() => ws.close(1011, 'NET-0001'), options.idleTimeoutMs ?? 10_000);
    const scripted = serveScript(ws, result);

    ws.on('message', (data: RawData, isBinary: boolean) => {
      idle.refresh();
      const bytes = Buffer.isBuffer(data) ? data : Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data)]);
      if (isBinary) {
        if (bytes.length % 2 !== 0) problems.push(`audio message of ${bytes.length} bytes is not whole linear16 samples`);
        const samples = new Int16Array(bytes.length >> 1);
        for (let i = 0; i < samples.length; i++) samples[i] = bytes.readInt16LE(2 * i);
        audio.push(samples);
        if (script) {
          scripted.audio(samples);
          waiters.changed();
          return;
        }
        received += samples.length / RATE;
        const inUtterance = received - utteranceStart;
        if (!sentInterim && inUtterance >= INTERIM_AFTER_SECONDS) {
          sentInterim = true;
          result(words().slice(0, 1).join(' '), utteranceStart, received, {});
        }
        if (!sentFinal && inUtterance >= FINAL_AFTER_SECONDS) {
          sentFinal = true;
          result(words().slice(0, half()).join(' '), utteranceStart, received, { is_final: true });
          segmentStart = received;
        }
        if (sentFinal && !sentSecondInterim && received - segmentStart >= INTERIM_AFTER_SECONDS) {
          sentSecondInterim = true;
          result(words().slice(half(), half() + 1).join(' '), segmentStart, received, {});
        }
        waiters.changed();
        return;
      }
      let message: { type?: unknown };
      try {
        message = JSON.parse(bytes.toString()) as { type?: unknown };
      } catch {
        message = {};
      }
      if (typeof message.type !== 'string' || !CONTROL_TYPES.has(message.type)) {
        problems.push(`unknown text message ${bytes.toString().slice(0, 100)}`);
        waiters.changed();
        return ws.close(1008, 'DATA-0000');
      }
      controls.push(message.type);
      const skipped = message.type === 'Finalize' && skipFinalize;
      if (skipped) skipFinalize = false;
      if (message.type === 'Finalize' && script && !skipped) scripted.finalize();
      else if (message.type === 'Finalize' && finalizeAnswered && !skipped) {
        result(words().slice(sentFinal ? half() : 0).join(' '), segmentStart, received, { is_final: true, from_finalize: true });
        if (queued.length) transcript = queued.shift()!;
        utteranceStart = segmentStart = received;
        sentInterim = sentFinal = sentSecondInterim = false;
      }
      if (message.type === 'CloseStream') {
        ws.send(JSON.stringify({ type: 'Metadata', transaction_key: 'deprecated', request_id: randomUUID(), sha256: '', created: new Date().toISOString(), duration: received, channels: 1 }));
        ws.close(1000);
      }
      waiters.changed();
    });
    ws.on('close', () => {
      clearTimeout(idle);
      sockets.delete(ws);
      waiters.changed();
    });
  }

  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}`,
    requests,
    controls,
    problems,
    openConnections: () => connections.size,
    receivedAudio: () => concatSamples(audio),
    setTranscript: (text) => {
      transcript = text;
      queued = [];
      script = null;
    },
    setTranscripts: (texts) => {
      [transcript = '', ...queued] = texts;
    },
    setScript: (phrases, scriptOptions = {}) => {
      script = [...phrases];
      scriptDelayMs = scriptOptions.delayMs ?? 0;
    },
    scriptLeft: () => script?.length ?? 0,
    answerFinalize: (yes) => void (finalizeAnswered = yes),
    skipNextFinalize: () => void (skipFinalize = true),
    closeConnections: (code, reason) => sockets.forEach((ws) => ws.close(code, reason)),
    waitFor: (predicate, what, timeoutMs) => waiters.waitFor(predicate, what, timeoutMs),
    close: async () => {
      sockets.forEach((ws) => ws.terminate());
      wss.close();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

function checkQuery(query: URLSearchParams, options: FakeDeepgramOptions): string[] {
  const expected: Record<string, (value: string) => boolean> = {
    encoding: (v) => v === 'linear16',
    sample_rate: (v) => v === String(RATE),
    channels: (v) => v === '1',
    interim_results: (v) => v === 'true',
    punctuate: (v) => v === 'true',
    endpointing: (v) => /^\d+$/.test(v) || v === 'false',
    model: (v) => (options.model ? v === options.model : v.length > 0),
    ...(options.language ? { language: (v: string) => v === options.language } : {}),
  };
  const wrong = [...query.keys()].filter((key) => !(key in expected)).map((key) => `unexpected query parameter ${key}`);
  for (const [key, ok] of Object.entries(expected)) {
    const value = query.get(key);
    if (value === null || !ok(value)) wrong.push(`query ${key}=${value ?? '(missing)'}`);
  }
  return wrong;
}

/** Refuses the upgrade as Deepgram does: an HTTP error with a dg-error header and a JSON body. */
function refuse(socket: Duplex, status: number, code: string, message: string): void {
  const body = JSON.stringify({ err_code: code, err_msg: message, request_id: randomUUID() });
  socket.end(
    `HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : 'Bad Request'}\r\nContent-Type: application/json\r\n` +
      `dg-error: ${message}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
