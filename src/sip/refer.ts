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

interface Pending {
  last: ReferProgress | null;
  settle(value: ReferProgress | null): void;
  timer: NodeJS.Timeout;
}

/** The REFER subscriptions of one dialog, keyed by the REFER's CSeq (the Event id). */
export class ReferSubscriptions {
  readonly #pending = new Map<string, Pending>();

  /** Starts waiting for NOTIFYs about the REFER sent with CSeq `seq`. */
  track(seq: number, timeoutMs: number): Promise<ReferProgress | null> {
    return new Promise((resolve) => {
      const id = String(seq);
      const settle = (value: ReferProgress | null): void => {
        clearTimeout(entry.timer);
        this.#pending.delete(id);
        resolve(value);
      };
      const entry: Pending = { last: null, settle, timer: setTimeout(() => settle(entry.last), timeoutMs) };
      this.#pending.set(id, entry);
    });
  }

  /** Reads one NOTIFY; returns the progress to report, or null when it is not one of ours. */
  notify(req: SipRequest): ReferProgress | null {
    const event = req.headers.get('Event') ?? '';
    if (!/^\s*refer\b/i.test(event)) return null;
    const id = headerParams(`x${event.slice(event.indexOf(';') === -1 ? event.length : event.indexOf(';'))}`).get('id');
    // Without an id the NOTIFY is about the first REFER of the dialog (RFC 3515 §2.4.6).
    const key = id ?? this.#pending.keys().next().value;
    const entry = key === undefined ? undefined : this.#pending.get(key);
    if (!entry) return null;
    const frag = parseSipfrag(req.body);
    const terminated = /^\s*terminated/i.test(req.headers.get('Subscription-State') ?? '');
    const progress: ReferProgress = {
      status: frag?.status ?? entry.last?.status ?? 0,
      reason: frag?.reason ?? entry.last?.reason ?? '',
      final: terminated || (frag !== null && frag.status >= 200),
    };
    entry.last = progress;
    if (progress.final) entry.settle(progress);
    return progress;
  }

  /** Resolves every waiting outcome with what it has (the dialog ended). */
  closeAll(): void {
    for (const entry of [...this.#pending.values()]) entry.settle(entry.last);
  }
}
