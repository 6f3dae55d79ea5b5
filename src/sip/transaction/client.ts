// Client transactions (RFC 3261 §17.1, with the INVITE "Accepted" state of RFC 6026).
import { SipHeaders } from '../message.ts';
import type { SipRequest, SipResponse } from '../message.ts';
import { TimerSet, describeError, isReliable } from './common.ts';
import type { Hop, MessageSender, SipTimerValues } from './common.ts';

export interface ClientTransactionUser {
  onProvisional?(res: SipResponse): void;
  /** Final responses; for INVITE every 2xx (retransmissions and forks too) comes here. */
  onFinal(res: SipResponse): void;
  /** Timer B / Timer F: no final response in time. */
  onTimeout(): void;
  onTransportError(message: string): void;
}

type State = 'calling' | 'trying' | 'proceeding' | 'completed' | 'accepted' | 'terminated';

abstract class ClientTransaction {
  protected state: State;
  protected readonly timers = new TimerSet();
  #finalSeen = false;

  constructor(
    readonly key: string,
    readonly request: SipRequest,
    readonly hop: Hop,
    protected readonly sender: MessageSender,
    protected readonly t: SipTimerValues,
    protected readonly tu: ClientTransactionUser,
    private readonly onTerminated: (key: string) => void,
    initial: State,
  ) {
    this.state = initial;
  }

  get terminated(): boolean {
    return this.state === 'terminated';
  }

  protected transmit(): void {
    this.sender.send(this.request, this.hop).catch((err: unknown) => this.fail(describeError(err)));
  }

  /** Ends the transaction now and tells the TU, unless it already has its final response. */
  abort(message: string): void {
    this.fail(message);
  }

  protected fail(message: string): void {
    if (this.state === 'terminated') return;
    // A send error after the final response (e.g. of a retransmitted ACK) changes nothing for the TU.
    const report = !this.#finalSeen;
    this.terminate();
    if (report) this.tu.onTransportError(message);
  }

  protected final(res: SipResponse): void {
    this.#finalSeen = true;
    this.tu.onFinal(res);
  }

  protected timeout(): void {
    if (this.state === 'terminated') return;
    this.terminate();
    this.tu.onTimeout();
  }

  terminate(): void {
    if (this.state === 'terminated') return;
    this.state = 'terminated';
    this.timers.clearAll();
    this.onTerminated(this.key);
  }

  abstract receive(res: SipResponse): void;
}

/** INVITE client transaction: Timer A retransmits, Timer B gives up, non-2xx finals are ACKed here. */
export class InviteClientTransaction extends ClientTransaction {
  #ack: SipRequest | null = null;

  constructor(key: string, request: SipRequest, hop: Hop, sender: MessageSender, t: SipTimerValues, tu: ClientTransactionUser, onTerminated: (key: string) => void) {
    super(key, request, hop, sender, t, tu, onTerminated, 'calling');
  }

  start(): void {
    this.transmit();
    if (!isReliable(this.hop)) this.#timerA(this.t.t1);
    this.timers.set('B', 64 * this.t.t1, () => this.timeout());
  }

  #timerA(interval: number): void {
    this.timers.set('A', interval, () => {
      if (this.state !== 'calling') return;
      this.transmit();
      this.#timerA(interval * 2);
    });
  }

  receive(res: SipResponse): void {
    if (this.state === 'terminated') return;
    if (res.status < 200) {
      if (this.state !== 'calling' && this.state !== 'proceeding') return;
      this.state = 'proceeding';
      this.timers.clear('A');
      this.timers.clear('B');
      this.tu.onProvisional?.(res);
      return;
    }
    if (res.status < 300) {
      if (this.state === 'completed') return;
      if (this.state !== 'accepted') {
        this.state = 'accepted';
        this.timers.clearAll();
        // RFC 6026 Timer M: keep catching 2xx retransmissions and forks for the TU.
        this.timers.set('M', 64 * this.t.t1, () => this.terminate());
      }
      this.final(res);
      return;
    }
    if (this.state === 'accepted') return;
    if (this.state === 'completed') {
      // A retransmitted final response: our ACK was lost, send it again.
      if (this.#ack) this.sender.send(this.#ack, this.hop).catch(() => undefined);
      return;
    }
    this.state = 'completed';
    this.timers.clearAll();
    this.#ack = buildNon2xxAck(this.request, res);
    this.sender.send(this.#ack, this.hop).catch(() => undefined);
    this.timers.set('D', isReliable(this.hop) ? 0 : 32_000, () => this.terminate());
    this.final(res);
  }
}

/** Non-INVITE client transaction: Timer E retransmits (capped at T2), Timer F gives up. */
export class NonInviteClientTransaction extends ClientTransaction {
  constructor(key: string, request: SipRequest, hop: Hop, sender: MessageSender, t: SipTimerValues, tu: ClientTransactionUser, onTerminated: (key: string) => void) {
    super(key, request, hop, sender, t, tu, onTerminated, 'trying');
  }

  start(): void {
    this.transmit();
    if (!isReliable(this.hop)) this.#timerE(this.t.t1);
    this.timers.set('F', 64 * this.t.t1, () => this.timeout());
  }

  #timerE(interval: number): void {
    this.timers.set('E', interval, () => {
      if (this.state !== 'trying' && this.state !== 'proceeding') return;
      this.transmit();
      this.#timerE(this.state === 'proceeding' ? this.t.t2 : Math.min(interval * 2, this.t.t2));
    });
  }

  receive(res: SipResponse): void {
    if (this.state !== 'trying' && this.state !== 'proceeding') return;
    if (res.status < 200) {
      if (this.state === 'trying' && !isReliable(this.hop)) this.#timerE(this.t.t2);
      this.state = 'proceeding';
      this.tu.onProvisional?.(res);
      return;
    }
    this.state = 'completed';
    this.timers.clearAll();
    this.timers.set('K', isReliable(this.hop) ? 0 : this.t.t4, () => this.terminate());
    this.final(res);
  }
}

/** RFC 3261 §17.1.1.3: the ACK of a non-2xx final response belongs to the INVITE transaction. */
export function buildNon2xxAck(invite: SipRequest, res: SipResponse): SipRequest {
  const headers = invite.headers;
  const ack: SipRequest = { kind: 'request', method: 'ACK', uri: invite.uri, headers: new SipHeaders(), body: Buffer.alloc(0) };
  const via = headers.get('Via');
  if (via !== undefined) ack.headers.append('Via', via);
  ack.headers.append('Max-Forwards', '70');
  for (const name of ['From', 'Call-ID']) ack.headers.append(name, headers.get(name) ?? '');
  ack.headers.append('To', res.headers.get('To') ?? headers.get('To') ?? '');
  const seq = /^\s*(\d+)/.exec(headers.get('CSeq') ?? '')?.[1] ?? '1';
  ack.headers.append('CSeq', `${seq} ACK`);
  for (const route of headers.getAll('Route')) ack.headers.append('Route', route);
  return ack;
}
