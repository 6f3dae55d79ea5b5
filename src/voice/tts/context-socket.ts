import type { LookupFunction } from 'node:net';
import { randomUUID } from 'node:crypto';
import type WebSocket from 'ws';
import type { RawData } from 'ws';
import { ChunkChannel } from './channel.ts';
import { closeSocket, openSocket } from './socket.ts';
import { scrubSecrets, TtsError, type TtsChunk, type TtsSession } from './types.ts';

/** What a provider made of one message from its socket. */
export type ContextEvent =
  | { kind: 'audio'; contextId: string; chunk: TtsChunk }
  | { kind: 'done'; contextId: string }
  | { kind: 'error'; contextId: string | null; message: string; statusCode?: number }
  | { kind: 'ignore' };

/** The provider-specific half of a context-multiplexed TTS WebSocket (ElevenLabs, Cartesia). */
export interface ContextProtocol {
  readonly provider: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  /** Resolves the host through the egress policy when the base URL is a tenant's. */
  readonly lookup?: LookupFunction | undefined;
  /** The key, so that provider error text quoting it can be scrubbed. */
  readonly secret: string | null;
  /** The messages that start one sentence in its own context. */
  start(text: string, contextId: string): object[];
  /** The message that stops a context whose audio is no longer wanted, if the provider has one. */
  cancel(contextId: string): object | null;
  parse(message: unknown): ContextEvent;
}

/**
 * One WebSocket per session, one provider context per sentence: a sentence can be dropped
 * (barge-in) without touching the connection, and the next sentence may start while the
 * previous one still streams. The socket is opened at `open()` and again lazily when the
 * provider closed it while idle (ElevenLabs closes after its inactivity timeout).
 */
export class ContextSocketSession implements TtsSession {
  private socket: WebSocket | null = null;
  private connecting: Promise<WebSocket> | null = null;
  private readonly contexts = new Map<string, ChunkChannel>();
  private lastError: { message: string; statusCode?: number } | null = null;
  private closed = false;
  /** Aborted by close(): gives up a handshake still under way. */
  private readonly lifetime = new AbortController();

  constructor(private readonly protocol: ContextProtocol) {}

  get provider(): string {
    return this.protocol.provider;
  }

  /** The open socket, connecting first when there is none. `signal` only stops this caller's wait. */
  async connect(signal: AbortSignal): Promise<WebSocket> {
    if (this.closed) throw new TtsError(this.provider, 'session closed');
    if (this.socket) return this.socket;
    this.connecting ??= openSocket(this.provider, this.protocol.url, this.protocol.headers, this.lifetime.signal, { lookup: this.protocol.lookup })
      .then((socket) => this.adopt(socket))
      .finally(() => (this.connecting = null));
    this.connecting.catch(() => {}); // each waiter handles the failure; none may be left waiting
    return untilAborted(this.connecting, signal, this.provider);
  }

  async *synthesize(text: string, signal: AbortSignal): AsyncIterable<TtsChunk> {
    if (signal.aborted || text.trim() === '') return;
    let socket: WebSocket;
    try {
      socket = await this.connect(signal);
    } catch (error) {
      if (signal.aborted) return;
      throw error;
    }
    const contextId = randomUUID();
    const channel = new ChunkChannel(signal);
    this.contexts.set(contextId, channel);
    try {
      for (const message of this.protocol.start(text, contextId)) socket.send(JSON.stringify(message));
      yield* channel;
    } finally {
      this.contexts.delete(contextId);
      const cancel = channel.finished ? null : this.protocol.cancel(contextId);
      if (cancel && this.socket === socket && socket.readyState === socket.OPEN) socket.send(JSON.stringify(cancel));
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.lifetime.abort();
    const socket = this.socket ?? (await this.connecting?.catch(() => null)) ?? null;
    this.socket = null;
    if (socket) await closeSocket(socket);
  }

  private adopt(socket: WebSocket): WebSocket {
    if (this.closed) {
      void closeSocket(socket);
      throw new TtsError(this.provider, 'session closed');
    }
    this.socket = socket;
    this.lastError = null;
    socket.on('message', (data: RawData, isBinary: boolean) => this.receive(data, isBinary));
    socket.on('error', () => {}); // 'close' follows and is where contexts are failed
    socket.on('close', (code: number) => {
      if (this.socket === socket) this.socket = null;
      const reason = this.lastError?.message ?? `socket closed (code ${code})`;
      for (const channel of this.contexts.values()) channel.fail(new TtsError(this.provider, reason, this.lastError?.statusCode));
      this.contexts.clear();
    });
    return socket;
  }

  private receive(data: RawData, isBinary: boolean): void {
    let event: ContextEvent;
    try {
      event = isBinary ? { kind: 'ignore' } : this.protocol.parse(JSON.parse(textOf(data)));
    } catch {
      return; // a message we cannot read carries nothing we could act on
    }
    if (event.kind === 'ignore') return;
    if (event.kind === 'error') {
      const error = { message: scrubSecrets(event.message, this.protocol.secret), statusCode: event.statusCode };
      const channel = event.contextId === null ? undefined : this.contexts.get(event.contextId);
      if (channel) channel.fail(new TtsError(this.provider, error.message, error.statusCode));
      else this.lastError = error; // a connection-level error: the close that follows reports it
      return;
    }
    const channel = this.contexts.get(event.contextId);
    if (!channel) return; // a context we dropped (barge-in) still draining
    if (event.kind === 'audio') channel.push(event.chunk);
    else channel.end();
  }
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal, provider: string): Promise<T> {
  if (signal.aborted) return Promise.reject(new TtsError(provider, 'aborted'));
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(new TtsError(provider, 'aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** A session with its socket already open, so a refused key fails the call's setup, not its first sentence. */
export async function openContextSession(protocol: ContextProtocol, signal: AbortSignal): Promise<ContextSocketSession> {
  const session = new ContextSocketSession(protocol);
  try {
    await session.connect(signal);
    return session;
  } catch (error) {
    await session.close();
    throw error;
  }
}

function textOf(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data as ArrayBuffer).toString('utf8');
}
