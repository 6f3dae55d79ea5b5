import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import WebSocket, { type RawData } from 'ws';
import { PIPELINE_RATE } from '../audio/format.ts';
import { samplesToBytes } from '../audio/pcm.ts';
import { SttError, errorCode, type SttOptions, type SttProvider, type SttSession } from './stt.ts';

export const DEEPGRAM_BASE_URL = 'wss://api.deepgram.com';
export const DEEPGRAM_DEFAULT_MODEL = 'nova-3';

export interface DeepgramSettings {
  /** Deepgram's own pause detection (`endpointing`, ms); it only marks is_final/speech_final early. */
  endpointingMs: number;
  /** A KeepAlive goes out after this long without audio (Deepgram closes a socket idle 10 s). */
  keepAliveMs: number;
  /** How long endUtterance waits for the `from_finalize` result, which Deepgram does not promise. */
  finalizeTimeoutMs: number;
  connectTimeoutMs: number;
  /** How long close() waits for Deepgram to close after CloseStream before cutting the socket. */
  closeTimeoutMs: number;
}

export const DEEPGRAM_DEFAULTS: Readonly<DeepgramSettings> = Object.freeze({
  endpointingMs: 300,
  keepAliveMs: 4000,
  finalizeTimeoutMs: 2000,
  connectTimeoutMs: 5000,
  closeTimeoutMs: 2000,
});

/** Seconds of audio a final result may fall short of the audio sent and still count as covering it. */
const COVERAGE_SLACK = 0.02;

interface Result {
  type?: string;
  start?: number;
  duration?: number;
  is_final?: boolean;
  from_finalize?: boolean;
  channel?: { alternatives?: { transcript?: string }[] };
}

/** Deepgram live transcription (`/v1/listen` over WebSocket), one socket per call. */
export function createDeepgramStt(settings: Partial<DeepgramSettings> = {}): SttProvider {
  const s = { ...DEEPGRAM_DEFAULTS, ...settings };
  return { name: 'deepgram', open: (options) => openSession(s, options) };
}

export function deepgramListenUrl(options: Pick<SttOptions, 'baseUrl' | 'model' | 'language'>, endpointingMs: number): URL {
  const url = new URL(`${options.baseUrl.replace(/\/+$/, '')}/v1/listen`);
  url.protocol = url.protocol.replace(/^http/, 'ws');
  url.searchParams.set('encoding', 'linear16');
  url.searchParams.set('sample_rate', String(PIPELINE_RATE));
  url.searchParams.set('channels', '1');
  url.searchParams.set('interim_results', 'true');
  url.searchParams.set('endpointing', String(endpointingMs));
  url.searchParams.set('model', options.model ?? DEEPGRAM_DEFAULT_MODEL);
  if (options.language) url.searchParams.set('language', options.language);
  return url;
}

async function openSession(s: DeepgramSettings, options: SttOptions): Promise<SttSession> {
  const headers: Record<string, string> = options.apiKey ? { Authorization: `Token ${options.apiKey}` } : {};
  const ws = new WebSocket(deepgramListenUrl(options, s.endpointingMs), { headers, handshakeTimeout: s.connectTimeoutMs, perMessageDeflate: false });
  const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
  let refused = (_err: SttError) => {};
  let refusedSocket: Socket | null = null;
  const onResponse = (_req: unknown, res: IncomingMessage) => {
    refusedSocket = res.socket;
    const reason = errorCode(res.headers['dg-error']) ?? '';
    refused(new SttError('deepgram', `Deepgram refused the connection: HTTP ${res.statusCode}${reason ? ` ${reason}` : ''}`, res.statusCode));
  };
  const onError = (err: NodeJS.ErrnoException) => refused(new SttError('deepgram', `Deepgram connection failed: ${err.code ?? 'socket error'}`));
  const onAbort = () => refused(new SttError('deepgram', 'the call ended while connecting to Deepgram'));
  ws.on('error', onError);
  ws.once('unexpected-response', onResponse);
  options.signal.addEventListener('abort', onAbort, { once: true });
  try {
    await new Promise<void>((resolve, reject) => {
      refused = reject;
      if (options.signal.aborted) onAbort();
      ws.once('open', resolve);
    });
  } catch (err) {
    ws.terminate(); // while connecting this aborts the handshake; 'close' follows
    await closed;
    // After a refusal ws has destroyed the socket, which closes a moment later: wait for it, so nothing is left behind.
    const socket = refusedSocket as Socket | null;
    if (socket && !socket.closed) await new Promise((resolve) => socket.once('close', resolve));
    throw err;
  } finally {
    options.signal.removeEventListener('abort', onAbort);
    ws.off('error', onError);
    ws.off('unexpected-response', onResponse);
  }
  return new DeepgramSession(ws, closed, s, options.signal);
}

interface Pending {
  audioEnd: number;
  resolve(text: string): void;
  reject(err: SttError): void;
  timer: NodeJS.Timeout;
}

class DeepgramSession implements SttSession {
  onInterim?: (text: string) => void;
  private sent = 0; // seconds of audio sent on this socket: Deepgram's result times count the same way
  private answeredUpTo = 0; // the audio end of the last utterance answered
  private utteranceHasAudio = false;
  private finals: string[] = [];
  private finalEnd = 0; // where the last final result ended
  private pending: Pending | null = null;
  private failure: SttError | null = null;
  private closing: Promise<void> | null = null;
  private readonly keepAlive: NodeJS.Timeout;
  private readonly onAbort = () => void this.close();

  constructor(
    private readonly ws: WebSocket,
    private readonly closed: Promise<void>,
    private readonly settings: DeepgramSettings,
    private readonly signal: AbortSignal,
  ) {
    this.keepAlive = setTimeout(() => this.sendKeepAlive(), settings.keepAliveMs);
    ws.on('message', (data, isBinary) => {
      if (!isBinary) this.onMessage(textOf(data));
    });
    ws.on('error', (err: NodeJS.ErrnoException) => this.fail(`Deepgram connection failed: ${err.code ?? 'socket error'}`));
    ws.on('close', (code, reason) => {
      clearTimeout(this.keepAlive);
      const text = errorCode(reason.toString()) ?? '';
      this.fail(`Deepgram closed the connection (${code}${text ? ` ${text}` : ''})`);
    });
    if (signal.aborted) this.onAbort();
    else signal.addEventListener('abort', this.onAbort, { once: true });
  }

  write(pcm16k: Int16Array): void {
    if (this.closing || this.failure || pcm16k.length === 0) return;
    this.utteranceHasAudio = true;
    this.ws.send(samplesToBytes(pcm16k));
    this.sent += pcm16k.length / PIPELINE_RATE;
    this.keepAlive.refresh();
  }

  endUtterance(): Promise<string> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closing) return Promise.reject(new SttError('deepgram', 'the Deepgram session is closed'));
    if (this.pending) return Promise.reject(new SttError('deepgram', 'endUtterance is already waiting'));
    if (!this.utteranceHasAudio) return Promise.resolve('');
    this.utteranceHasAudio = false;
    const audioEnd = this.sent;
    // Deepgram may have finalized all of it already (its endpointing): nothing to wait for.
    if (this.finalEnd >= audioEnd - COVERAGE_SLACK) return Promise.resolve(this.takeText(audioEnd));
    this.ws.send(JSON.stringify({ type: 'Finalize' }));
    return new Promise<string>((resolve, reject) => {
      // Deepgram does not promise a from_finalize answer when little audio was left: then the finals so far are the text.
      const timer = setTimeout(() => this.settle(), this.settings.finalizeTimeoutMs);
      this.pending = { audioEnd, resolve, reject, timer };
    });
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.signal.removeEventListener('abort', this.onAbort);
      clearTimeout(this.keepAlive);
      this.failPending(new SttError('deepgram', 'the Deepgram session was closed'));
      if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ type: 'CloseStream' }));
      const cut = setTimeout(() => this.ws.terminate(), this.settings.closeTimeoutMs);
      if (this.ws.readyState !== WebSocket.CLOSED) await this.closed;
      clearTimeout(cut);
    })();
    return this.closing;
  }

  private onMessage(text: string): void {
    let message: Result;
    try {
      message = JSON.parse(text) as Result;
    } catch {
      return;
    }
    if (message.type !== 'Results') return;
    const transcript = message.channel?.alternatives?.[0]?.transcript?.trim() ?? '';
    const end = (message.start ?? 0) + (message.duration ?? 0);
    // A late result for an utterance already answered (after a finalize timeout) is not this one's.
    if (end <= this.answeredUpTo + COVERAGE_SLACK) return;
    if (!message.is_final) {
      if (transcript) this.onInterim?.([...this.finals, transcript].join(' '));
      return;
    }
    this.finalEnd = Math.max(this.finalEnd, end);
    if (transcript) this.finals.push(transcript);
    if (this.pending && (message.from_finalize || this.finalEnd >= this.pending.audioEnd - COVERAGE_SLACK)) this.settle();
    else if (transcript) this.onInterim?.(this.finals.join(' '));
  }

  private settle(): void {
    const pending = this.pending;
    if (!pending) return;
    this.pending = null;
    clearTimeout(pending.timer);
    pending.resolve(this.takeText(pending.audioEnd));
  }

  private takeText(audioEnd: number): string {
    const text = this.finals.join(' ');
    this.finals = [];
    this.answeredUpTo = audioEnd;
    return text;
  }

  private sendKeepAlive(): void {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    this.ws.send(JSON.stringify({ type: 'KeepAlive' }));
    this.keepAlive.refresh();
  }

  private fail(message: string): void {
    if (this.closing) return;
    this.failure ??= new SttError('deepgram', message);
    this.failPending(this.failure);
  }

  private failPending(err: SttError): void {
    const pending = this.pending;
    if (!pending) return;
    this.pending = null;
    clearTimeout(pending.timer);
    pending.reject(err);
  }
}

function textOf(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  return Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data)]).toString('utf8');
}
