// Server transactions (RFC 3261 §17.2, with the INVITE "Accepted" state of RFC 6026).
// An INVITE transaction also retransmits its 2xx until the ACK comes (§13.3.1.4), so the
// dialog layer only has to tell it when that ACK arrived.
import { randomBytes } from 'node:crypto';
import type { SipRequest, SipResponse } from '../message.ts';
import { TimerSet, describeError, isReliable } from './common.ts';
import type { Hop, MessageSender, SipTimerValues } from './common.ts';

export interface ServerTransactionUser {
  /** The 2xx was never ACKed (Timer L), or the non-2xx final never was (Timer H). */
  onNoAck?(): void;
  /** A CANCEL for this INVITE arrived before our final response (the 200 to it is sent). */
  onCancel?(): void;
  onTransportError?(message: string): void;
}

type State = 'trying' | 'proceeding' | 'completed' | 'accepted' | 'confirmed' | 'terminated';

abstract class ServerTransaction {
  protected state: State;
  protected last: SipResponse | null = null;
  protected readonly timers = new TimerSet();
  tu: ServerTransactionUser = {};
  /** The To tag of every response we send in this transaction (and of the 200 to its CANCEL, RFC 3261 §9.2). */
  readonly toTag = randomBytes(6).toString('hex');

  constructor(
    readonly key: string,
    readonly request: SipRequest,
    readonly hop: Hop,
    protected readonly sender: MessageSender,
    protected readonly t: SipTimerValues,
    private readonly onTerminated: (key: string) => void,
    initial: State,
  ) {
    this.state = initial;
  }

  get terminated(): boolean {
    return this.state === 'terminated';
  }

  /** Answered, and only kept to absorb retransmissions: the first to go when room is needed. */
  abstract get lingering(): boolean;

  /** Whether a final response has been sent. */
  get answered(): boolean {
    return this.last !== null && this.last.status >= 200;
  }

  protected transmit(res: SipResponse): void {
    this.sender.send(res, this.hop).catch((err: unknown) => {
      if (this.state === 'terminated') return;
      this.terminate();
      this.tu.onTransportError?.(describeError(err));
    });
  }

  terminate(): void {
    if (this.state === 'terminated') return;
    this.state = 'terminated';
    this.timers.clearAll();
    this.onTerminated(this.key);
  }

  /** The same request again: repeat the last response, if there is one. */
  receiveRetransmission(): void {
    if (this.last && this.state !== 'terminated' && this.state !== 'confirmed') this.transmit(this.last);
  }

  abstract respond(res: SipResponse): void;
}

export class InviteServerTransaction extends ServerTransaction {
  constructor(key: string, request: SipRequest, hop: Hop, sender: MessageSender, t: SipTimerValues, onTerminated: (key: string) => void) {
    super(key, request, hop, sender, t, onTerminated, 'proceeding');
  }

  get lingering(): boolean {
    return this.state === 'confirmed';
  }

  respond(res: SipResponse): void {
    if (this.state !== 'proceeding') return;
    this.last = res;
    this.transmit(res);
    if (res.status < 200) return;
    if (res.status < 300) {
      this.state = 'accepted';
      if (!isReliable(this.hop)) this.#retransmit('G', this.t.t1);
      this.timers.set('L', 64 * this.t.t1, () => {
        this.terminate();
        this.tu.onNoAck?.();
      });
      return;
    }
    this.state = 'completed';
    if (!isReliable(this.hop)) this.#retransmit('G', this.t.t1);
    this.timers.set('H', 64 * this.t.t1, () => {
      this.terminate();
      this.tu.onNoAck?.();
    });
  }

  #retransmit(name: string, interval: number): void {
    this.timers.set(name, interval, () => {
      if ((this.state !== 'completed' && this.state !== 'accepted') || !this.last) return;
      this.transmit(this.last);
      this.#retransmit(name, Math.min(interval * 2, this.t.t2));
    });
  }

  /** The ACK of a non-2xx final (same branch): stop retransmitting, absorb ACK copies for T4. */
  receiveAck(): boolean {
    if (this.state === 'confirmed') return true;
    if (this.state !== 'completed') return false;
    this.state = 'confirmed';
    this.timers.clearAll();
    this.timers.set('I', isReliable(this.hop) ? 0 : this.t.t4, () => this.terminate());
    return true;
  }

  /** The ACK of our 2xx, matched through the dialog. */
  ackReceived(): void {
    if (this.state === 'accepted') this.terminate();
  }

  override receiveRetransmission(): void {
    // In Accepted the 2xx is on its own retransmission schedule already.
    if (this.state === 'proceeding' || this.state === 'completed') super.receiveRetransmission();
  }
}

export class NonInviteServerTransaction extends ServerTransaction {
  constructor(key: string, request: SipRequest, hop: Hop, sender: MessageSender, t: SipTimerValues, onTerminated: (key: string) => void) {
    super(key, request, hop, sender, t, onTerminated, 'trying');
  }

  get lingering(): boolean {
    return this.state === 'completed';
  }

  respond(res: SipResponse): void {
    if (this.state !== 'trying' && this.state !== 'proceeding') return;
    this.last = res;
    this.transmit(res);
    if (res.status < 200) {
      this.state = 'proceeding';
      return;
    }
    this.state = 'completed';
    this.timers.set('J', isReliable(this.hop) ? 0 : 64 * this.t.t1, () => this.terminate());
  }
}
