// Reads SIP messages off one TCP/TLS connection, with the deadlines the HTTP side has: once a
// message has begun, its head must arrive within `headMs` and its body within `bodyMs` after
// that, so a peer dripping bytes (slowloris) cannot hold a connection for minutes. Between
// messages a connection may rest, keepalive CRLFs included, until `idleMs` without a byte.
import type net from 'node:net';
import { SipStreamFramer } from './message.ts';
import type { SipMessage, SipParseError } from './message.ts';

export interface StreamDeadlines {
  /** A connection that carries nothing this long is closed. */
  idleMs: number;
  /** A message's head, from its first byte (for an incoming connection's first message: from the connection). */
  headMs: number;
  /** A message's body, from the end of its head. */
  bodyMs: number;
}

export interface StreamEvents {
  /** Messages framed off one chunk, with the bytes they took since the last ones (rate limiting counts those). */
  messages(messages: SipMessage[], bytes: number): void;
  /** The stream cannot be framed (the connection is being destroyed). */
  garbage(err: SipParseError): void;
  /** A deadline passed (the connection is being destroyed). */
  late(what: 'head' | 'body'): void;
}

export class StreamReader {
  readonly #framer = new SipStreamFramer();
  #timer: NodeJS.Timeout | undefined;
  #waitingFor: 'nothing' | 'head' | 'body' = 'nothing';
  #unchargedBytes = 0;
  /** When the last message was completed; 0 before the first. */
  lastMessageAt = 0;

  constructor(private readonly socket: net.Socket, private readonly deadlines: StreamDeadlines, private readonly events: StreamEvents, firstMessageDue: boolean) {
    socket.setTimeout(deadlines.idleMs, () => socket.destroy());
    socket.on('data', (chunk: Buffer) => this.#read(chunk));
    socket.on('close', () => clearTimeout(this.#timer));
    // An incoming connection must bring its first message in time, as if its first byte had come.
    if (firstMessageDue) this.#expect('head');
  }

  /** Whether a whole message has come on this connection yet. */
  get proven(): boolean {
    return this.lastMessageAt > 0;
  }

  #read(chunk: Buffer): void {
    this.#unchargedBytes += chunk.length;
    let messages: SipMessage[];
    try {
      messages = this.#framer.push(chunk);
    } catch (err) {
      this.events.garbage(err as SipParseError);
      this.socket.destroy();
      return;
    }
    if (messages.length > 0) {
      // A message that begins in the chunk that ended the last one gets a deadline of its own.
      clearTimeout(this.#timer);
      this.#waitingFor = 'nothing';
      this.lastMessageAt = performance.now();
      const bytes = this.#unchargedBytes - this.#framer.bufferedBytes;
      this.#unchargedBytes = this.#framer.bufferedBytes;
      this.events.messages(messages, bytes);
    }
    if (!this.socket.destroyed) this.#expect(this.#framer.receiving);
  }

  /** Runs the deadline of what is awaited now; a part already awaited keeps its deadline. */
  #expect(part: 'nothing' | 'head' | 'body'): void {
    if (part === this.#waitingFor) return;
    clearTimeout(this.#timer);
    this.#waitingFor = part;
    if (part === 'nothing') return;
    this.#timer = setTimeout(() => {
      this.events.late(part);
      this.socket.destroy();
    }, part === 'head' ? this.deadlines.headMs : this.deadlines.bodyMs);
  }
}
