import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import WebSocket from 'ws';
import { PIPELINE_RATE } from '../audio/format.ts';
import { DeepgramSession } from './deepgram-session.ts';
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
  // Punctuation tells smart endpointing where a sentence ended (docs/voice.md, "Turn-taking").
  url.searchParams.set('punctuate', 'true');
  url.searchParams.set('endpointing', String(endpointingMs));
  url.searchParams.set('model', options.model ?? DEEPGRAM_DEFAULT_MODEL);
  if (options.language) url.searchParams.set('language', options.language);
  return url;
}

async function openSession(s: DeepgramSettings, options: SttOptions): Promise<SttSession> {
  const headers: Record<string, string> = options.apiKey ? { Authorization: `Token ${options.apiKey}` } : {};
  const ws = new WebSocket(deepgramListenUrl(options, s.endpointingMs), { headers, handshakeTimeout: s.connectTimeoutMs, perMessageDeflate: false, ...(options.lookup ? { lookup: options.lookup } : {}) });
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
