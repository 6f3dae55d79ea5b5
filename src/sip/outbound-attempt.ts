// One INVITE to one resolved address, from the first send to its outcome. CANCEL follows
// RFC 3261 §9.1: only once a provisional response has come; a 2xx that crosses our
// CANCEL is ACKed and hung up at once.
import type { DigestRound, DigestSession } from './auth.ts';
import type { SipCore } from './core.ts';
import type { Dialog } from './dialog.ts';
import { SipHeaders, headerParams } from './message.ts';
import type { SipRequest, SipResponse } from './message.ts';
import type { OutboundResult, PlaceCallOptions } from './outbound.ts';
import { newRequest } from './requests.ts';
import type { Hop } from './transaction/common.ts';
import { TransactionLimitError } from './transaction/layer.ts';

type Cancelled = 'signal' | 'ring-timeout';

export interface AttemptDeps {
  core: SipCore;
  options: PlaceCallOptions;
  hop: Hop;
  credentials: DigestSession;
  /** The first INVITE; retries after a challenge are copies with CSeq + 1. */
  invite: SipRequest;
  seq: number;
  makeDialog: (res: SipResponse, invite: SipRequest) => Dialog;
}

export class OutboundAttempt {
  /** Whether any response came from this address (then there is no failover). */
  answeredAtAll = false;
  #invite: SipRequest;
  #seq: number;
  readonly #auth: DigestRound;
  #provisional = false;
  #cancelBy: Cancelled | null = null;
  #cancelSent = false;
  #earlySdp: string | null = null;
  #dialog: Dialog | null = null;
  #settled = false;
  #resolve: (result: OutboundResult) => void = () => undefined;
  #ringTimer: NodeJS.Timeout | undefined;
  readonly #onAbort = (): void => this.#cancel('signal');

  constructor(private readonly deps: AttemptDeps) {
    this.#invite = deps.invite;
    this.#seq = deps.seq;
    this.#auth = deps.credentials.round();
  }

  run(): Promise<OutboundResult> {
    const { signal, ringTimeoutMs } = this.deps.options;
    return new Promise<OutboundResult>((resolve) => {
      this.#resolve = resolve;
      if (signal?.aborted) return this.#settle({ outcome: 'cancelled', by: 'signal', status: null, reason: 'aborted before dialling' });
      signal?.addEventListener('abort', this.#onAbort, { once: true });
      this.#ringTimer = setTimeout(() => this.#cancel('ring-timeout'), ringTimeoutMs);
      this.#send();
    });
  }

  #send(): void {
    const { core, hop } = this.deps;
    const headers = new SipHeaders();
    for (const h of this.#invite.headers.entries()) if (h.name !== 'Via') headers.append(h.name, h.value);
    headers.set('CSeq', `${this.#seq} INVITE`);
    const req: SipRequest = { ...this.#invite, headers };
    this.#auth.authorize(req);
    this.#invite = core.stamp(req, hop);
    try {
      core.transactions.startInvite(this.#invite, hop, {
        onProvisional: (res) => this.#onProvisional(res),
        onFinal: (res) => this.#onFinal(res),
        onTimeout: () => this.#settle(this.#cancelBy ? this.#cancelled(null, 'no answer') : { outcome: 'failed', reason: 'timeout', message: 'no answer from the trunk' }),
        onTransportError: (message) => this.#settle(this.#cancelBy ? this.#cancelled(null, message) : { outcome: 'failed', reason: 'transport', message }),
      });
    } catch (err) {
      if (!(err instanceof TransactionLimitError)) throw err;
      this.#settle({ outcome: 'failed', reason: 'overloaded', message: err.message });
    }
  }

  #onProvisional(res: SipResponse): void {
    this.answeredAtAll = true;
    if (this.#cancelBy) return this.#sendCancel();
    this.#provisional = true;
    const sdp = res.body.length > 0 && /^application\/sdp/i.test(res.headers.get('Content-Type') ?? '') ? res.body.toString('utf8') : null;
    if (sdp) this.#earlySdp = sdp;
    this.deps.options.onProgress?.({ status: res.status, reason: res.reason, sdp, signalAddress: this.deps.hop.address });
  }

  #onFinal(res: SipResponse): void {
    this.answeredAtAll = true;
    if (res.status < 300) return this.#accept(res);
    if ((res.status === 401 || res.status === 407) && !this.#cancelBy && !this.#settled && this.#auth.challenged(res)) {
      this.#seq += 1;
      this.#send();
      return;
    }
    this.#settle(this.#cancelBy ? this.#cancelled(res.status, res.reason) : { outcome: 'rejected', status: res.status, reason: res.reason });
  }

  #accept(res: SipResponse): void {
    const { core } = this.deps;
    const toTag = headerParams(res.headers.get('To') ?? '').get('tag') ?? '';
    if (this.#dialog && this.#dialog.key.endsWith(`|${toTag}`)) return this.#dialog.handle2xxRetransmission(res);
    const dialog = this.deps.makeDialog(res, this.#invite);
    const auth = this.#invite.headers.entries().filter((h) => h.name === 'Authorization' || h.name === 'Proxy-Authorization');
    void dialog.sendAck(this.#seq, auth.map((h): [string, string] => [h.name, h.value])).catch((err: unknown) => {
      core.log.warn({ callId: dialog.callId, err: (err as Error).message }, 'sip: could not send ACK');
    });
    if (this.#dialog || this.#cancelBy || !core.registerDialog(dialog)) {
      // A second 2xx (a fork), one that crossed our CANCEL, or no room: ACK it and hang up.
      void dialog.bye();
      if (!this.#dialog) this.#settle(this.#cancelBy ? this.#cancelled(res.status, 'answered while cancelling') : { outcome: 'failed', reason: 'overloaded', message: 'too many dialogs' });
      return;
    }
    this.#dialog = dialog;
    this.#settle({ outcome: 'answered', dialog, remoteSdp: res.body.length > 0 ? res.body.toString('utf8') : (this.#earlySdp ?? ''), signalAddress: this.deps.hop.address });
  }

  #cancelled(status: number | null, reason: string): OutboundResult {
    return { outcome: 'cancelled', by: this.#cancelBy ?? 'signal', status, reason };
  }

  #cancel(by: Cancelled): void {
    if (this.#settled) {
      if (by === 'signal') void this.#dialog?.bye();
      return;
    }
    if (this.#cancelBy) return;
    this.#cancelBy = by;
    // Before any provisional response a CANCEL may not be sent; the caller gets its answer
    // now, and the CANCEL (or the ACK and BYE of a late 2xx) follows in the background.
    if (this.#provisional) this.#sendCancel();
    else this.#settle(this.#cancelled(null, 'cancelled before any answer'));
  }

  /** RFC 3261 §9.1: same Request-URI, Call-ID, From, To, CSeq number, top Via and Route as the INVITE. */
  #sendCancel(): void {
    if (this.#cancelSent) return;
    this.#cancelSent = true;
    const h = this.#invite.headers;
    const fields: Array<[string, string]> = [['Via', h.get('Via') ?? '']];
    for (const name of ['From', 'To', 'Call-ID']) fields.push([name, h.get(name) ?? '']);
    fields.push(['CSeq', `${this.#seq} CANCEL`], ...h.getAll('Route').map((r): [string, string] => ['Route', r]));
    const cancel = newRequest('CANCEL', this.#invite.uri, fields);
    try {
      this.deps.core.transactions.startRequest(cancel, this.deps.hop, { onFinal: () => undefined, onTimeout: () => undefined, onTransportError: () => undefined });
    } catch (err) {
      this.deps.core.log.warn({ err: (err as Error).message }, 'sip: could not send CANCEL');
    }
  }

  #settle(result: OutboundResult): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#ringTimer);
    const signal = this.deps.options.signal;
    if (result.outcome === 'answered') {
      // Still listening: aborting after the answer hangs up.
      void result.dialog.ended.then(() => signal?.removeEventListener('abort', this.#onAbort));
    } else {
      signal?.removeEventListener('abort', this.#onAbort);
    }
    this.#resolve(result);
  }
}
