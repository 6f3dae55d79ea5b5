import { setTimeout as sleep } from 'node:timers/promises';
import type { Worker } from 'node:worker_threads';
import { HISTOGRAM_LAYOUT, LatenessHistogram, type LatenessStats } from '../../voice/lateness.ts';
import { startThread } from '../../voice/thread.ts';

/**
 * The RTP sockets of the process, on a thread of their own. The main thread runs every call's
 * conversation (VAD, STT, LLM, TTS, the database); with a hundred calls it is busy enough that a
 * 20 ms timer there fires tens of milliseconds late now and then, and a phone plays that as a
 * gap. So the main thread hands a call's frames over a few ahead of time (the transport's lead)
 * and this thread sends them on a steady 20 ms cadence, as a media server's send loop does.
 * Barge-in flushes what is queued here, so the lead costs nothing there.
 *
 * Messages are batched both ways: what the main thread hands over in one turn of its event loop
 * goes in one message, and the datagrams that arrive in one turn of this thread's come back in
 * one.
 */
export type Pacing = 'start' | 'continue';

export interface RtpLateness extends LatenessStats {
  /** Frames that continued a talkspurt but were handed over after their time: the main thread was later than the lead. */
  lateHandovers: number;
}

/**
 * How late the media thread sent frames, in memory it writes and the main thread reads: a
 * LatenessHistogram on shared memory, and the late hand-overs. Read without locks, so a reading
 * may be a frame behind. Owned by the port pool, so a restarted thread goes on counting.
 */
export class RtpFigures {
  readonly memory = new SharedArrayBuffer(HISTOGRAM_LAYOUT.bytes);
  readonly counters = new SharedArrayBuffer(4);
  readonly #histogram = new LatenessHistogram(this.memory);
  readonly #lateHandovers = new Uint32Array(this.counters);

  stats(): RtpLateness {
    return { ...this.#histogram.stats(), lateHandovers: this.#lateHandovers[0] as number };
  }
}

export interface Datagram {
  kind: 'rtp' | 'rtcp';
  data: Buffer;
  address: string;
  port: number;
}

export interface MediaSocketHandlers {
  packet(datagram: Datagram): void;
  error(kind: 'rtp' | 'rtcp', message: string): void;
}

/** What the main thread hands the media thread, batched: [op, session id, …] (media.thread.ts). */
export type MediaItem =
  | ['rtp', number, Uint8Array, number, string, boolean]
  | ['rtcp', number, Uint8Array, number, string, number | undefined]
  | ['flush', number]
  | ['drain', number, number]
  | ['close', number, number];

export type ToMediaThread =
  | { op: 'open'; id: number; port: number; host: string; family: 'udp4' | 'udp6' }
  | { op: 'batch'; items: MediaItem[] };

export type FromMediaThread =
  | { kind: 'ready'; priority: 'raised' | 'default' }
  | { op: 'opened'; id: number; ok: boolean }
  | { op: 'in'; batch: unknown[] }
  | { op: 'error'; id: number; kind: 0 | 1; message: string }
  | { op: 'ack'; ack: number };

/** What the media thread starts with: the memory its figures are written to (RtpFigures). */
export interface MediaThreadData {
  memory: SharedArrayBuffer;
  counters: SharedArrayBuffer;
}

export class MediaThread {
  readonly #worker: Worker;
  readonly #handlers = new Map<number, MediaSocketHandlers>();
  readonly #opening = new Map<number, (ok: boolean) => void>();
  readonly #acks = new Map<number, () => void>();
  #items: MediaItem[] = [];
  #nextId = 1;
  #closed = false;
  readonly #closing = new Set<Promise<void>>();
  readonly #onExit: (error: Error | null) => void;

  private constructor(worker: Worker, onExit: (error: Error | null) => void, readonly priorityRaised: boolean) {
    this.#worker = worker;
    worker.on('message', (message: FromMediaThread) => this.#receive(message));
    // A thread that dies takes its calls' media with it; whoever waits on it is answered, and
    // the owner starts a new one for the next call.
    worker.on('error', (error) => this.#gone(error));
    worker.on('exit', () => this.#gone(null));
    this.#onExit = onExit;
    this.#holdProcess();
  }

  static async start(figures: RtpFigures, onExit: (error: Error | null) => void = () => undefined): Promise<MediaThread> {
    const data: MediaThreadData = { memory: figures.memory, counters: figures.counters };
    const { worker, ready } = await startThread('the RTP media thread', import.meta.url, 'media.thread', data);
    return new MediaThread(worker, onExit, ready.priority === 'raised');
  }

  #gone(error: Error | null): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#settle();
    this.#onExit(error);
  }

  /** Answers everyone still waiting: no port, nothing to ack. */
  #settle(): void {
    for (const resolve of this.#opening.values()) resolve(false);
    for (const resolve of this.#acks.values()) resolve();
    this.#opening.clear();
    this.#acks.clear();
    this.#handlers.clear();
  }

  /** Binds `port` (RTP) and `port + 1` (RTCP) on `host`; null when either is taken. */
  async open(port: number, host: string, family: 'udp4' | 'udp6', handlers: MediaSocketHandlers): Promise<number | null> {
    const id = this.#nextId++;
    const ok = await new Promise<boolean>((resolve) => {
      this.#opening.set(id, resolve);
      this.#holdProcess();
      this.#flushItems(); // after the closes handed over before it, which may free this port
      this.#worker.postMessage({ op: 'open', id, port, host, family } satisfies ToMediaThread);
    });
    if (ok) this.#handlers.set(id, handlers);
    this.#holdProcess();
    return ok ? id : null;
  }

  /** A packet to its session's paced queue: 'start' begins a talkspurt, 'continue' follows 20 ms after the one before. */
  sendRtp(id: number, packet: Buffer, port: number, address: string, pacing: Pacing): void {
    this.#post(['rtp', id, packet, port, address, pacing === 'start']);
  }

  /** An RTCP packet, sent at once; `sent` runs once it has left the socket. */
  sendRtcp(id: number, packet: Buffer, port: number, address: string, sent?: () => void): void {
    this.#post(['rtcp', id, packet, port, address, sent ? this.#ack(sent) : undefined]);
  }

  /** Drops the packets of `id` still queued (barge-in). */
  flush(id: number): void {
    this.#post(['flush', id]);
  }

  /** Resolves once every packet of `id` handed over so far has been sent (or dropped). */
  drained(id: number): Promise<void> {
    return new Promise((resolve) => this.#post(['drain', id, this.#ack(resolve)]));
  }

  /**
   * Drops what is queued and closes both sockets once what was sent before (the RTCP BYE) has
   * left them; the process is held until then.
   */
  close(id: number): void {
    this.#handlers.delete(id);
    const closed = new Promise<void>((resolve) => this.#post(['close', id, this.#ack(resolve)]));
    this.#closing.add(closed);
    void closed.then(() => this.#closing.delete(closed));
  }

  /** Stops the thread, once the sockets being closed have sent what they had (at most `graceMs`). */
  async stop(graceMs = 1_000): Promise<void> {
    if (this.#closed) return;
    this.#flushItems();
    const grace = new AbortController();
    await Promise.race([Promise.all(this.#closing), sleep(graceMs, undefined, { signal: grace.signal })]);
    grace.abort();
    this.#closed = true;
    this.#settle();
    await this.#worker.terminate();
  }

  #ack(then: () => void): number {
    const ack = this.#nextId++;
    if (this.#closed) {
      queueMicrotask(() => then());
      return ack;
    }
    this.#acks.set(ack, then);
    this.#holdProcess();
    return ack;
  }

  /**
   * Like sockets on the main thread, the thread keeps the process alive while a port pair is open
   * or an answer is awaited, and not otherwise.
   */
  #holdProcess(): void {
    if (this.#handlers.size + this.#opening.size + this.#acks.size > 0) this.#worker.ref();
    else this.#worker.unref();
  }

  #post(item: MediaItem): void {
    if (this.#closed) return;
    if (this.#items.length === 0) queueMicrotask(() => this.#flushItems());
    this.#items.push(item);
  }

  #flushItems(): void {
    if (this.#items.length === 0 || this.#closed) return;
    const items = this.#items;
    this.#items = [];
    this.#worker.postMessage({ op: 'batch', items } satisfies ToMediaThread);
  }

  #receive(message: FromMediaThread): void {
    if (!('op' in message)) return; // the ready message, taken by startThread
    switch (message.op) {
      case 'opened':
        return this.#take(this.#opening, message.id)?.(message.ok);
      case 'in':
        return this.#deliver(message.batch);
      case 'error':
        return this.#handlers.get(message.id)?.error(message.kind === 0 ? 'rtp' : 'rtcp', message.message);
      case 'ack':
        return this.#take(this.#acks, message.ack)?.();
    }
  }

  /** The one waiting on `key`, no longer waiting. */
  #take<T>(waiting: Map<number, T>, key: number): T | undefined {
    const waiter = waiting.get(key);
    waiting.delete(key);
    this.#holdProcess();
    return waiter;
  }

  /** The batch is flat: id, kind (0 RTP, 1 RTCP), bytes, address, port, then the next datagram. */
  #deliver(batch: unknown[]): void {
    for (let i = 0; i + 4 < batch.length; i += 5) {
      const handlers = this.#handlers.get(batch[i] as number);
      if (!handlers) continue;
      const bytes = batch[i + 2] as Uint8Array;
      handlers.packet({
        kind: batch[i + 1] === 0 ? 'rtp' : 'rtcp',
        data: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
        address: batch[i + 3] as string,
        port: batch[i + 4] as number,
      });
    }
  }
}
