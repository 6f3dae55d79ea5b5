import type { LookupFunction } from 'node:net';
import { EventEmitter } from 'node:events';
import type { RealtimeClientEvent, RealtimeServerEvent } from 'openai/resources/realtime/realtime';
import WebSocket, { type RawData } from 'ws';
import { pcm16FromBytes } from '../tts/pcm.ts';
import { scrubSecrets } from '../tts/types.ts';
import { realtimeSessionConfig, realtimeUrl, REALTIME_SAMPLE_RATE, type RealtimeSessionSettings } from './session-config.ts';

/**
 * A client for the OpenAI Realtime WebSocket API (speech to speech, GA protocol). It passes
 * audio both ways and reports what happens as typed events; it runs no tools itself (tool calls
 * go to the caller, which answers with sendToolResult).
 *
 * Written on `ws` rather than the SDK's `OpenAIRealtimeWS`: that one always connects with
 * `wss:`, so it cannot reach a local server or test peer on plain `ws:`, and the SDK's event
 * types (used here) keep every message we send checked against the API's own definitions.
 */
export interface RealtimeOptions extends RealtimeSessionSettings {
  apiKey: string | null;
  baseUrl: string;
  signal?: AbortSignal;
  handshakeTimeoutMs?: number;
  /** Resolves the host through the egress policy when the base URL is a tenant's. */
  lookup?: LookupFunction | undefined;
}

export class RealtimeError extends Error {
  readonly code: string | undefined;
  readonly statusCode: number | undefined;
  constructor(message: string, details: { code?: string; statusCode?: number } = {}) {
    super(message);
    this.name = 'RealtimeError';
    this.code = details.code;
    this.statusCode = details.statusCode;
  }
}

export interface RealtimeEvents {
  /** Assistant speech, PCM16 mono at 24 kHz. */
  audio: [{ responseId: string; itemId: string; pcm: Int16Array; sampleRate: number }];
  assistantTranscriptDelta: [{ itemId: string; delta: string }];
  assistantTranscript: [{ itemId: string; text: string }];
  userTranscript: [{ itemId: string; text: string }];
  speechStarted: [{ itemId: string; audioStartMs: number }];
  speechStopped: [{ itemId: string; audioEndMs: number }];
  toolCall: [{ callId: string; name: string; arguments: string; itemId: string; responseId: string }];
  responseDone: [{ responseId: string; status: string }];
  /** Errors the server reports; a session goes on after most of them. Without a listener they are dropped. */
  error: [RealtimeError];
  close: [{ code: number }];
}

export class OpenAiRealtimeClient extends EventEmitter<RealtimeEvents> {
  private closing: Promise<void> | null = null;

  private constructor(private readonly socket: WebSocket, private readonly apiKey: string | null) {
    super();
    socket.on('message', (data: RawData) => this.receive(data));
    socket.on('error', () => {}); // 'close' follows
    socket.on('close', (code: number) => this.emit('close', { code }));
  }

  /** Connects and configures the session; resolves once the server confirmed the configuration. */
  static async connect(options: RealtimeOptions): Promise<OpenAiRealtimeClient> {
    const socket = await open(options);
    const client = new OpenAiRealtimeClient(socket, options.apiKey);
    try {
      await client.configure(options, options.handshakeTimeoutMs ?? 10_000);
      return client;
    } catch (error) {
      await client.close();
      throw error;
    }
  }

  /** Caller audio, PCM16 mono at 24 kHz. */
  appendAudio(pcm: Int16Array): void {
    const bytes = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
    this.send({ type: 'input_audio_buffer.append', audio: bytes.toString('base64') });
  }

  /** The result of a tool call, then a new response so the model speaks about it. */
  sendToolResult(callId: string, output: string, respond = true): void {
    this.send({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: callId, output } });
    if (respond) this.send({ type: 'response.create' });
  }

  cancelResponse(): void {
    this.send({ type: 'response.cancel' });
  }

  /** After a barge-in: the assistant item was heard only up to `audioEndMs`, so the model forgets the rest. */
  truncate(itemId: string, audioEndMs: number): void {
    this.send({ type: 'conversation.item.truncate', item_id: itemId, content_index: 0, audio_end_ms: Math.max(0, Math.round(audioEndMs)) });
  }

  /** Idempotent. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      if (this.socket.readyState === WebSocket.CLOSED) return resolve();
      const timer = setTimeout(() => this.socket.terminate(), 2_000);
      this.socket.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      if (this.socket.readyState === WebSocket.OPEN) this.socket.close(1000);
      else this.socket.terminate();
    });
    return this.closing;
  }

  private send(event: RealtimeClientEvent): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(event));
  }

  private configure(settings: RealtimeSessionSettings, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const done = (error?: RealtimeError) => {
        clearTimeout(timer);
        this.off('close', onClose);
        this.socket.off('message', onMessage);
        if (error) reject(error);
        else resolve();
      };
      const onMessage = (data: RawData) => {
        const event = parse(data);
        if (event?.type === 'session.updated') done();
        else if (event?.type === 'error') done(new RealtimeError(this.clean(event.error.message), { code: event.error.code ?? undefined }));
      };
      const onClose = ({ code }: { code: number }) => done(new RealtimeError(`socket closed (code ${code}) before the session was configured`));
      const timer = setTimeout(() => done(new RealtimeError('no session.updated in time')), timeoutMs);
      this.socket.on('message', onMessage);
      this.on('close', onClose);
      this.send({ type: 'session.update', session: realtimeSessionConfig(settings) });
    });
  }

  private receive(data: RawData): void {
    const event = parse(data);
    if (!event) return;
    switch (event.type) {
      case 'response.output_audio.delta':
        this.emit('audio', { responseId: event.response_id, itemId: event.item_id, pcm: pcm16FromBytes(Buffer.from(event.delta, 'base64')), sampleRate: REALTIME_SAMPLE_RATE });
        break;
      case 'response.output_audio_transcript.delta':
        this.emit('assistantTranscriptDelta', { itemId: event.item_id, delta: event.delta });
        break;
      case 'response.output_audio_transcript.done':
        this.emit('assistantTranscript', { itemId: event.item_id, text: event.transcript });
        break;
      case 'conversation.item.input_audio_transcription.completed':
        this.emit('userTranscript', { itemId: event.item_id, text: event.transcript });
        break;
      case 'input_audio_buffer.speech_started':
        this.emit('speechStarted', { itemId: event.item_id, audioStartMs: event.audio_start_ms });
        break;
      case 'input_audio_buffer.speech_stopped':
        this.emit('speechStopped', { itemId: event.item_id, audioEndMs: event.audio_end_ms });
        break;
      case 'response.function_call_arguments.done':
        this.emit('toolCall', { callId: event.call_id, name: event.name, arguments: event.arguments, itemId: event.item_id, responseId: event.response_id });
        break;
      case 'response.done':
        this.emit('responseDone', { responseId: event.response.id ?? '', status: event.response.status ?? 'completed' });
        break;
      case 'error':
        if (this.listenerCount('error') > 0) this.emit('error', new RealtimeError(this.clean(event.error.message), { code: event.error.code ?? undefined }));
        break;
      default:
        break;
    }
  }

  private clean(message: string): string {
    return scrubSecrets(message, this.apiKey);
  }
}

function parse(data: RawData): RealtimeServerEvent | null {
  try {
    const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
    return JSON.parse(text) as RealtimeServerEvent;
  } catch {
    return null;
  }
}

function open(options: RealtimeOptions): Promise<WebSocket> {
  const url = realtimeUrl(options.baseUrl, options.model);
  const headers: Record<string, string> = options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {};
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers, handshakeTimeout: options.handshakeTimeoutMs ?? 10_000, ...(options.lookup ? { lookup: options.lookup } : {}) });
    const fail = (error: RealtimeError) => {
      options.signal?.removeEventListener('abort', onAbort);
      socket.removeAllListeners();
      socket.on('error', () => {});
      socket.terminate();
      reject(error);
    };
    const onAbort = () => fail(new RealtimeError('connection aborted'));
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('unexpected-response', (_req, res) => {
      res.resume();
      fail(new RealtimeError(`handshake refused with HTTP ${res.statusCode ?? '?'}`, { statusCode: res.statusCode }));
    });
    socket.once('error', (err) => fail(new RealtimeError(`connection failed: ${err.message}`)));
    socket.once('open', () => {
      options.signal?.removeEventListener('abort', onAbort);
      socket.removeAllListeners();
      resolve(socket);
    });
  });
}
