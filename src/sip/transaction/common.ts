// What every RFC 3261 transaction (§17) shares: the timer values, the hop a message
// travels over, and a small set of named timers that all stop when the transaction ends.
import type { SipMessage } from '../message.ts';
import type { SipTransport } from '../resolve.ts';

/** RFC 3261 T1 (RTT estimate), T2 (cap for non-INVITE retransmits), T4 (max network lifetime). */
export interface SipTimerValues {
  t1: number;
  t2: number;
  t4: number;
}

export const DEFAULT_TIMERS: SipTimerValues = { t1: 500, t2: 4000, t4: 5000 };

/** Where one message goes (or came from): transport, address and port. */
export interface Hop {
  transport: SipTransport;
  address: string;
  port: number;
  /** For TLS: the name the certificate must match. */
  servername?: string;
}

/** The transport layer as a transaction sees it. */
export interface MessageSender {
  send(msg: SipMessage, hop: Hop): Promise<void>;
}

export const isReliable = (hop: Hop): boolean => hop.transport !== 'udp';

/** Named one-shot timers; clearAll() when the transaction terminates, so none outlives it. */
export class TimerSet {
  readonly #timers = new Map<string, NodeJS.Timeout>();

  set(name: string, ms: number, fn: () => void): void {
    this.clear(name);
    this.#timers.set(name, setTimeout(() => {
      this.#timers.delete(name);
      fn();
    }, ms));
  }

  clear(name: string): void {
    clearTimeout(this.#timers.get(name));
    this.#timers.delete(name);
  }

  clearAll(): void {
    for (const t of this.#timers.values()) clearTimeout(t);
    this.#timers.clear();
  }
}

export function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
