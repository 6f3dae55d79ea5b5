// Blind transfer (RFC 3515): the REFER we sent creates an implicit subscription, and the
// far end reports the new call's progress in NOTIFYs carrying message/sipfrag.
import { headerParams } from './message.ts';
import type { SipRequest } from './message.ts';
import { parseSipfrag } from './bodies.ts';

export interface ReferProgress {
  status: number;
  reason: string;
  /** A final status, or the subscription ended: no more NOTIFYs will come. */
  final: boolean;
}

export interface ReferResult {
  /** The answer to the REFER itself (202 Accepted, or 4xx/5xx/6xx). */
  status: number;
  reason: string;
  accepted: boolean;
  /** The last progress the far end reported: resolves at the final one, or null on timeout. */
  outcome: Promise<ReferProgress | null>;
}

interface Subscription {
  /** The CSeq numbers the REFER went out with (a digest retry takes a new one). */
  ids: Set<string>;
  last: ReferProgress | null;
  settle(value: ReferProgress | null): void;
  timer: NodeJS.Timeout;
}

export interface OpenSubscription {
  /** Call with each CSeq the REFER is sent with. */
  sentWith(seq: number): void;
  /** The REFER was refused: stop waiting. */
  cancel(): void;
  outcome: Promise<ReferProgress | null>;
}

/**
 * The REFER subscriptions of one dialog (RFC 3515 §2.4.6: a NOTIFY names its REFER's CSeq
 * in the Event id). A subscription is opened before the REFER leaves, because its first
 * NOTIFY may overtake the 202 (through a proxy with several workers, it does).
 */
export class ReferSubscriptions {
  readonly #open = new Set<Subscription>();
  #drained: Array<() => void> = [];

  get pending(): number {
    return this.#open.size;
  }

  open(timeoutMs: number): OpenSubscription {
    let settle!: (value: ReferProgress | null) => void;
    const outcome = new Promise<ReferProgress | null>((resolve) => (settle = resolve));
    const sub: Subscription = {
      ids: new Set(),
      last: null,
      settle: (value) => {
        if (!this.#open.delete(sub)) return;
        clearTimeout(sub.timer);
        settle(value);
        if (this.#open.size === 0) for (const done of this.#drained.splice(0)) done();
      },
      timer: setTimeout(() => sub.settle(sub.last), timeoutMs),
    };
    this.#open.add(sub);
    return { sentWith: (seq) => sub.ids.add(String(seq)), cancel: () => sub.settle(null), outcome };
  }

  /** Resolves once no subscription is open any more. */
  drained(): Promise<void> {
    return this.#open.size === 0 ? Promise.resolve() : new Promise((resolve) => this.#drained.push(resolve));
  }

  /** Reads one NOTIFY; returns the progress to report, or null when it is not one of ours. */
  notify(req: SipRequest): ReferProgress | null {
    const event = req.headers.get('Event') ?? '';
    if (!/^\s*refer\b/i.test(event)) return null;
    const semi = event.indexOf(';');
    const id = semi === -1 ? undefined : headerParams(`x${event.slice(semi)}`).get('id') ?? undefined;
    // Without an id the NOTIFY is about the first REFER of the dialog.
    const sub = [...this.#open].find((s) => (id === undefined ? true : s.ids.has(id)));
    if (!sub) return null;
    const frag = parseSipfrag(req.body);
    const terminated = /^\s*terminated/i.test(req.headers.get('Subscription-State') ?? '');
    const progress: ReferProgress = {
      status: frag?.status ?? sub.last?.status ?? 0,
      reason: frag?.reason ?? sub.last?.reason ?? '',
      final: terminated || (frag !== null && frag.status >= 200),
    };
    sub.last = progress;
    if (progress.final) sub.settle(progress);
    return progress;
  }

  /** Resolves every waiting outcome with what it has. */
  closeAll(): void {
    for (const sub of [...this.#open]) sub.settle(sub.last);
  }
}
