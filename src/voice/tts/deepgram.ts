import type { RawData } from 'ws';
import type WebSocket from 'ws';
import { ChunkChannel } from './channel.ts';
import { Pcm16Assembler } from './pcm.ts';
import { closeSocket, openSocket, webSocketBase } from './socket.ts';
import { scrubSecrets, TtsError, type TtsChunk, type TtsOptions, type TtsSession } from './types.ts';

/**
 * Deepgram's Aura text to speech over its streaming WebSocket (`/v1/speak`). The socket carries
 * one stream of text: `Speak` messages add to Deepgram's buffer, `Flush` makes it speak what it
 * has (raw audio in binary messages, then `Flushed`), `Clear` drops what is buffered or still
 * being made (`Cleared` when done), `Close` ends the socket after the audio. So sentences go one
 * after the other on one socket: each is Speak + Flush and ends at its Flushed; a sentence cut by
 * barge-in is Cleared before the next starts, so no audio of it can be taken for the next.
 */
export const DEFAULT_AURA_MODEL = 'aura-2-thalia-en';
/** linear16 rates of the streaming endpoint. */
export const AURA_SAMPLE_RATES = [8000, 16000, 24000, 32000, 48000] as const;
/** Deepgram takes at most 2,000 characters in one Speak message. */
const MAX_SPEAK = 2000;
/** A sentence with no audio or Flushed for this long has stalled: the socket is dropped, the next sentence reconnects. */
const SILENCE_MS = 10_000;
/** How long a Clear may take to be confirmed before the socket is dropped instead. */
const CLEAR_MS = 2_000;

export function auraSampleRate(requested: number | undefined): number {
  if (requested === undefined) return 24000;
  return AURA_SAMPLE_RATES.find((rate) => rate >= requested) ?? 48000;
}

export function auraUrl(options: Pick<TtsOptions, 'baseUrl' | 'voice'>): string {
  const { voice } = options;
  const query = new URLSearchParams({
    // An Aura voice is a model (aura-2-thalia-en): the strategy's voiceId names it, or its modelId.
    model: voice.voiceId ?? voice.modelId ?? DEFAULT_AURA_MODEL,
    encoding: 'linear16',
    sample_rate: String(auraSampleRate(voice.outputSampleRate)),
    // Aura-2 takes 0.7..1.5.
    ...(voice.speed !== undefined ? { speed: String(Math.min(1.5, Math.max(0.7, voice.speed))) } : {}),
  });
  return `${webSocketBase(options.baseUrl)}/v1/speak?${query.toString()}`;
}

/** The text of a sentence in Speak messages of at most MAX_SPEAK characters, cut between words. */
function speakMessages(text: string): string[] {
  const parts: string[] = [];
  let rest = text.trim();
  while (rest.length > MAX_SPEAK) {
    const cut = rest.lastIndexOf(' ', MAX_SPEAK);
    const at = cut > 0 ? cut : MAX_SPEAK;
    parts.push(rest.slice(0, at));
    rest = rest.slice(at).trimStart();
  }
  return [...parts, rest].map((part) => JSON.stringify({ type: 'Speak', text: part }));
}

/** A close reason or warning code as Deepgram writes them (`NET-0000`), or nothing. */
const shortCode = (value: unknown) => (typeof value === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(value) ? value : '');

/** One sentence on the socket: its chunks, its audio bytes (a message may end inside a sample), whether it was spoken to the end. */
interface Sentence {
  channel: ChunkChannel;
  pcm: Pcm16Assembler;
  flushed: boolean;
  stalled: NodeJS.Timeout;
}

class AuraSession implements TtsSession {
  readonly provider = 'deepgram';
  private readonly url: string;
  private readonly sampleRate: number;
  private socket: WebSocket | null = null;
  private connecting: Promise<WebSocket> | null = null;
  /** The sentence being spoken: audio and Flushed belong to it. */
  private current: Sentence | null = null;
  /** Set after a Clear until Deepgram confirms it: whatever arrives meanwhile was the cut sentence's. */
  private cleared: (() => void) | null = null;
  private lastWarning: string | null = null;
  /** Sentences take turns: one stream of text per socket. */
  private turn: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly lifetime = new AbortController();

  constructor(private readonly options: TtsOptions) {
    this.url = auraUrl(options);
    this.sampleRate = auraSampleRate(options.voice.outputSampleRate);
  }

  async connect(signal: AbortSignal): Promise<WebSocket> {
    if (this.closed) throw new TtsError(this.provider, 'session closed');
    if (this.socket) return this.socket;
    const headers: Record<string, string> = this.options.apiKey ? { Authorization: `Token ${this.options.apiKey}` } : {};
    this.connecting ??= openSocket(this.provider, this.url, headers, AbortSignal.any([signal, this.lifetime.signal]), { lookup: this.options.lookup })
      .then((socket) => this.adopt(socket))
      .finally(() => (this.connecting = null));
    return this.connecting;
  }

  async *synthesize(text: string, signal: AbortSignal): AsyncIterable<TtsChunk> {
    if (signal.aborted || text.trim() === '') return;
    const previous = this.turn;
    let release = () => {};
    this.turn = new Promise((resolve) => (release = resolve));
    try {
      await previous;
      if (signal.aborted) return;
      let socket: WebSocket;
      try {
        socket = await this.connect(signal);
      } catch (error) {
        if (signal.aborted) return;
        throw error;
      }
      const sentence: Sentence = {
        channel: new ChunkChannel(signal), pcm: new Pcm16Assembler(), flushed: false,
        stalled: setTimeout(() => this.drop(socket, `no audio for ${SILENCE_MS / 1000} s`), SILENCE_MS),
      };
      this.current = sentence;
      this.lastWarning = null;
      try {
        for (const message of speakMessages(text)) socket.send(message);
        socket.send(JSON.stringify({ type: 'Flush' }));
        yield* sentence.channel;
      } finally {
        clearTimeout(sentence.stalled);
        this.current = null;
        // Cut (barge-in) or failed (a Warning): what Deepgram still holds of it must not reach the next sentence.
        if (!sentence.flushed) await this.clear(socket);
      }
    } finally {
      release();
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.lifetime.abort();
    const socket = this.socket ?? (await this.connecting?.catch(() => null)) ?? null;
    this.socket = null;
    if (!socket) return;
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify({ type: 'Close' }));
    await closeSocket(socket);
  }

  /** A cut sentence: Deepgram drops its buffer and the audio it is still making; the next sentence waits for that. */
  private async clear(socket: WebSocket): Promise<void> {
    if (this.socket !== socket || socket.readyState !== socket.OPEN) return;
    const done = new Promise<void>((resolve) => (this.cleared = resolve));
    socket.send(JSON.stringify({ type: 'Clear' }));
    const timer = setTimeout(() => this.drop(socket, 'Clear was not confirmed'), CLEAR_MS);
    await done;
    clearTimeout(timer);
  }

  /** Gives up on a socket that stopped answering; the next sentence opens another. */
  private drop(socket: WebSocket, reason: string): void {
    this.current?.channel.fail(new TtsError(this.provider, reason));
    socket.terminate();
  }

  private adopt(socket: WebSocket): WebSocket {
    if (this.closed) {
      void closeSocket(socket);
      throw new TtsError(this.provider, 'session closed');
    }
    this.socket = socket;
    this.lastWarning = null;
    socket.on('message', (data: RawData, isBinary: boolean) => this.receive(data, isBinary));
    socket.on('error', () => {}); // 'close' follows
    socket.on('close', (code: number, reason: Buffer) => {
      if (this.socket === socket) this.socket = null;
      this.finishClear();
      const why = this.lastWarning ?? `socket closed (code ${code}${shortCode(reason.toString()) ? ` ${shortCode(reason.toString())}` : ''})`;
      this.current?.channel.fail(new TtsError(this.provider, why));
    });
    return socket;
  }

  private receive(data: RawData, isBinary: boolean): void {
    const sentence = this.cleared ? null : this.current;
    sentence?.stalled.refresh();
    if (isBinary) {
      sentence?.channel.push({ pcm: sentence.pcm.push(bytesOf(data)), sampleRate: this.sampleRate });
      return;
    }
    let message: { type?: unknown; description?: unknown; code?: unknown };
    try {
      message = JSON.parse(bytesOf(data).toString('utf8')) as typeof message;
    } catch {
      return; // nothing we could act on
    }
    if (message.type === 'Flushed' && sentence) {
      sentence.flushed = true;
      sentence.channel.end();
    } else if (message.type === 'Cleared') this.finishClear();
    else if (message.type === 'Warning') {
      // A warning says a request was not done (a Flush over Deepgram's limit): the sentence waiting for it fails.
      const description = typeof message.description === 'string' ? scrubSecrets(message.description, this.options.apiKey).slice(0, 300) : 'warning';
      this.lastWarning = `${shortCode(message.code) || 'Warning'}: ${description}`;
      sentence?.channel.fail(new TtsError(this.provider, this.lastWarning));
    }
    // Metadata (request id, model) carries nothing to act on.
  }

  private finishClear(): void {
    const cleared = this.cleared;
    this.cleared = null;
    cleared?.();
  }
}

function bytesOf(data: RawData): Buffer {
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.isBuffer(data) ? data : Buffer.from(data);
}

/** Opens the socket at once, so a refused key fails the call's setup rather than its first sentence. */
export async function openAuraSession(options: TtsOptions): Promise<TtsSession> {
  const session = new AuraSession(options);
  try {
    await session.connect(options.signal);
    return session;
  } catch (error) {
    await session.close();
    throw error;
  }
}
