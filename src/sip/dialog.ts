// One established call leg (RFC 3261 §12): requests we send inside it (BYE, REFER,
// OPTIONS) and the ones the far end sends (BYE, re-INVITE, UPDATE, INFO, NOTIFY, OPTIONS).
import { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DigestSession } from './auth.ts';
import { parseDtmfInfo } from './bodies.ts';
import type { DialogHandle, SipCore } from './core.ts';
import { dialogKey } from './core.ts';
import { addressRequest, firstHop } from './dialog-route.ts';
import { parseCSeq, splitHeaderList } from './message.ts';
import type { SipRequest, SipResponse } from './message.ts';
import { ReferSubscriptions } from './refer.ts';
import type { ReferProgress, ReferResult } from './refer.ts';
import { ALLOW, makeResponse, newRequest } from './requests.ts';
import type { ResponseOptions } from './requests.ts';
import { SdpNegotiationError, answerReoffer } from './sdp.ts';
import type { NegotiatedMedia } from './sdp.ts';
import type { Hop } from './transaction/common.ts';
import { TransactionLimitError } from './transaction/layer.ts';
import type { ServerTransaction } from './transaction/layer.ts';
import type { InviteServerTransaction } from './transaction/server.ts';
import { formatUri, parseNameAddr } from './uri.ts';

export interface DialogInit {
  role: 'uac' | 'uas';
  callId: string;
  localTag: string;
  remoteTag: string;
  /** Our From (UAC) or To (UAS) value without its tag, e.g. `<sip:+4930123@trunk>`. */
  localUri: string;
  remoteUri: string;
  localSeq: number;
  remoteSeq: number | null;
  remoteTarget: string;
  routeSet: string[];
  localContact: string;
  localSdp: string;
  remoteSdp: string;
  /** For dialogs through a trunk: proxies may challenge BYE or REFER too. */
  credentials?: DigestSession;
}

export interface DialogEnd {
  by: 'local' | 'remote' | 'error';
  reason: string;
}

export interface DialogEvents {
  ended: [DialogEnd];
  /** DTMF the far end sent in INFO (RFC 4733 digits come from the RTP session). */
  dtmf: [{ digit: string; durationMs: number | null }];
  /** The far end changed the session (re-INVITE or UPDATE) and we answered. */
  sdp: [{ remoteSdp: string; localSdp: string; negotiated: NegotiatedMedia | null }];
  refer: [ReferProgress];
}

const tagged = (uri: string, tag: string): string => `${uri};tag=${tag}`;
const REFER_TIMEOUT_MS = 64_000;

export class Dialog extends EventEmitter<DialogEvents> implements DialogHandle {
  readonly key: string;
  readonly role: 'uac' | 'uas';
  readonly callId: string;
  localSdp: string;
  remoteSdp: string;
  readonly ended: Promise<DialogEnd>;
  #state: 'confirmed' | 'terminated' = 'confirmed';
  #localSeq: number;
  #remoteSeq: number | null;
  #remoteTarget: string;
  readonly #routeSet: string[];
  #hop: Promise<Hop> | null = null;
  #ack: { req: SipRequest; hop: Hop } | null = null;
  #pendingInvite: { tx: InviteServerTransaction; seq: number; initial: boolean; offerSent: boolean; acked: () => void } | null = null;
  #initialAck: Promise<void> = Promise.resolve();
  readonly #refers = new ReferSubscriptions();
  #resolveEnded!: (end: DialogEnd) => void;

  constructor(private readonly core: SipCore, private readonly init: DialogInit) {
    super();
    this.key = dialogKey(init.callId, init.localTag, init.remoteTag);
    this.role = init.role;
    this.callId = init.callId;
    this.localSdp = init.localSdp;
    this.remoteSdp = init.remoteSdp;
    this.#localSeq = init.localSeq;
    this.#remoteSeq = init.remoteSeq;
    this.#remoteTarget = init.remoteTarget;
    this.#routeSet = init.routeSet;
    this.ended = new Promise((resolve) => (this.#resolveEnded = resolve));
  }

  get state(): 'confirmed' | 'terminated' {
    return this.#state;
  }

  get remoteTarget(): string {
    return this.#remoteTarget;
  }

  get routeSet(): readonly string[] {
    return this.#routeSet;
  }

  /**
   * UAC: ACKs the 2xx of the INVITE with CSeq `seq` (RFC 3261 §13.2.2.4: built like a request
   * inside the dialog, with the INVITE's credentials). Kept to answer 2xx retransmissions.
   */
  async sendAck(seq: number, credentials: Array<[string, string]>): Promise<void> {
    const addressed = addressRequest(this.#remoteTarget, this.#routeSet);
    this.#hop ??= firstHop(addressed, this.core.policy);
    const hop = await this.#hop;
    const req = newRequest('ACK', addressed.requestUri, [
      ...addressed.routes.map((r): [string, string] => ['Route', r]),
      ['From', tagged(this.init.localUri, this.init.localTag)],
      ['To', tagged(this.init.remoteUri, this.init.remoteTag)],
      ['Call-ID', this.callId],
      ['CSeq', `${seq} ACK`],
      ...credentials,
    ]);
    this.#ack = { req: this.core.stamp(req, hop), hop };
    await this.core.send(this.#ack.req, hop);
  }

  /** UAS: the INVITE transaction whose 2xx waits for an ACK. Resolves at the ACK or at Timer L. */
  expectAck(tx: InviteServerTransaction, seq: number, options: { initial: boolean; offerSent: boolean }): Promise<void> {
    const acked = new Promise<void>((resolve) => {
      this.#pendingInvite = { tx, seq, ...options, acked: resolve };
      tx.tu = {
        onNoAck: () => {
          this.#pendingInvite = null;
          resolve();
          // §13.3.1.4: a 2xx never ACKed ends the session. A lost ACK of a re-INVITE keeps the call.
          if (options.initial) void this.#hangup({ by: 'error', reason: 'no ACK for our 200 OK' });
        },
      };
    });
    if (options.initial) this.#initialAck = acked;
    return acked;
  }

  handleAck(ack: SipRequest): void {
    const pending = this.#pendingInvite;
    if (!pending || seqOf(ack) !== pending.seq) return;
    this.#pendingInvite = null;
    pending.tx.ackReceived();
    if (pending.offerSent && ack.body.length > 0) {
      this.remoteSdp = ack.body.toString('utf8');
      this.emit('sdp', { remoteSdp: this.remoteSdp, localSdp: this.localSdp, negotiated: null });
    }
    pending.acked();
  }

  handle2xxRetransmission(res: SipResponse): void {
    if (this.#ack && seqOf(res) === seqOf(this.#ack.req)) this.core.send(this.#ack.req, this.#ack.hop).catch(() => undefined);
  }

  handleRequest(req: SipRequest, tx: ServerTransaction): void {
    const seq = seqOf(req);
    const reply = (status: number, options: ResponseOptions = {}): void => tx.respond(makeResponse(req, status, options));
    // After the call ended only a transfer's NOTIFYs still belong here.
    if (this.#state === 'terminated' && req.method !== 'NOTIFY') return reply(481);
    if (this.#remoteSeq !== null && seq <= this.#remoteSeq) {
      reply(500, { reason: 'CSeq Out of Order' });
      return;
    }
    this.#remoteSeq = seq;
    switch (req.method) {
      case 'BYE':
        reply(200);
        this.#end({ by: 'remote', reason: 'BYE' });
        return;
      case 'OPTIONS':
        reply(200, { headers: [['Allow', ALLOW], ['Accept', 'application/sdp']] });
        return;
      case 'INFO': {
        const dtmf = parseDtmfInfo(req.headers.get('Content-Type'), req.body);
        reply(dtmf || req.body.length === 0 ? 200 : 415);
        if (dtmf) this.emit('dtmf', dtmf);
        return;
      }
      case 'NOTIFY': {
        const progress = this.#refers.notify(req);
        reply(progress ? 200 : 481, progress ? {} : { reason: 'Subscription Does Not Exist' });
        if (progress) this.emit('refer', progress);
        return;
      }
      case 'INVITE':
      case 'UPDATE':
        this.#reoffer(req, tx);
        return;
      case 'REFER':
        reply(405, { headers: [['Allow', ALLOW]] });
        return;
      default:
        reply(501);
    }
  }

  /** re-INVITE or UPDATE: hold, resume or a session refresh. Answered from the same session. */
  #reoffer(req: SipRequest, tx: ServerTransaction): void {
    if (req.method === 'INVITE' && this.#pendingInvite) {
      tx.respond(makeResponse(req, 500, { headers: [['Retry-After', String(1 + Math.floor(Math.random() * 9))]] }));
      return;
    }
    this.#refreshTarget(req);
    let negotiated: NegotiatedMedia | null = null;
    let sdp = this.localSdp;
    if (req.body.length > 0) {
      try {
        ({ sdp, negotiated } = answerReoffer(req.body.toString('utf8'), this.localSdp));
      } catch (err) {
        // The call goes on with the session it had (RFC 3261 §14.2).
        tx.respond(makeResponse(req, err instanceof SdpNegotiationError ? 488 : 400));
        return;
      }
      this.remoteSdp = req.body.toString('utf8');
    }
    this.localSdp = sdp;
    const headers: Array<[string, string]> = [['Contact', this.init.localContact], ['Allow', ALLOW], ['Content-Type', 'application/sdp']];
    tx.respond(makeResponse(req, 200, { headers, body: Buffer.from(sdp) }));
    if (req.method === 'INVITE') void this.expectAck(tx as InviteServerTransaction, seqOf(req), { initial: false, offerSent: req.body.length === 0 });
    if (negotiated) this.emit('sdp', { remoteSdp: this.remoteSdp, localSdp: this.localSdp, negotiated });
  }

  /** re-INVITE and UPDATE are target refresh requests: their Contact is the new remote target. */
  #refreshTarget(req: SipRequest): void {
    const contact = req.headers.get('Contact');
    if (!contact) return;
    try {
      const next = formatUri(parseNameAddr(splitHeaderList(contact)[0] ?? '').uri);
      if (next !== this.#remoteTarget) {
        this.#remoteTarget = next;
        this.#hop = null;
      }
    } catch {
      // A Contact we cannot read leaves the old target in place.
    }
  }

  /**
   * Sends BYE (waiting first for the ACK of our 200, as §15 asks) and ends the dialog. Never
   * rejects: a BYE that fails is logged and counted (`counters.byeFailures`).
   */
  async bye(): Promise<void> {
    await this.#hangup({ by: 'local', reason: 'hangup' });
  }

  async #hangup(end: DialogEnd): Promise<void> {
    if (this.#state === 'terminated') return;
    // The dialog stays registered until then, so that the ACK can still find it.
    if (this.#pendingInvite?.initial) await this.#initialAck;
    if (this.state === 'terminated') return; // the far end hung up meanwhile
    this.#end(end);
    await this.#sendBye();
  }

  /**
   * Our BYE, never lost in silence: a full transaction table is waited out (T1, doubling up to
   * T2, for at most 64 × T1, as long as a transaction would have tried), and a BYE that gets no
   * final answer or cannot be sent is logged as a warning and counted (the far end may keep
   * its leg up, and bill it, until its own timers end it).
   */
  async #sendBye(): Promise<void> {
    const { t1, t2 } = this.core.timers;
    let wait = t1;
    for (let waited = 0; ; waited += wait, wait = Math.min(2 * wait, t2)) {
      try {
        await this.request('BYE');
        return;
      } catch (err) {
        if (err instanceof TransactionLimitError && waited < 64 * t1) {
          await sleep(wait);
          continue;
        }
        this.core.counters.byeFailures += 1;
        this.core.log.warn({ callId: this.callId, err: err instanceof Error ? err.message : String(err) }, 'sip: our BYE failed; the far end may keep its leg up until its own timers end it');
        return;
      }
    }
  }

  abandon(reason: string): void {
    this.#refers.closeAll();
    this.#end({ by: 'error', reason });
  }

  /** Blind transfer: REFER with Refer-To `target` (a SIP or tel URI). */
  async refer(target: string, options: { timeoutMs?: number } = {}): Promise<ReferResult> {
    if (!/^(sips?|tel):[^\s<>]+$/i.test(target)) throw new TypeError(`invalid transfer target ${JSON.stringify(target)}`);
    const subscription = this.#refers.open(options.timeoutMs ?? REFER_TIMEOUT_MS);
    let res: SipResponse;
    try {
      ({ res } = await this.request('REFER', [['Refer-To', `<${target}>`], ['Referred-By', this.init.localUri], ['Contact', this.init.localContact]], undefined, (seq) => subscription.sentWith(seq)));
    } catch (err) {
      subscription.cancel();
      throw err;
    }
    const accepted = res.status >= 200 && res.status < 300;
    if (!accepted) subscription.cancel();
    return { status: res.status, reason: res.reason, accepted, outcome: accepted ? subscription.outcome : Promise.resolve(null) };
  }

  /** OPTIONS inside the dialog: is the far end still there? Resolves with its status. */
  async ping(): Promise<number> {
    return (await this.request('OPTIONS')).res.status;
  }

  /** Sends one request inside the dialog, answering a digest challenge once. */
  async request(method: string, headers: Array<[string, string]> = [], body?: { type: string; data: Buffer }, onSeq?: (seq: number) => void): Promise<{ res: SipResponse; seq: number }> {
    const addressed = addressRequest(this.#remoteTarget, this.#routeSet);
    this.#hop ??= firstHop(addressed, this.core.policy);
    const hop = await this.#hop;
    const round = this.init.credentials?.round();
    for (;;) {
      const seq = ++this.#localSeq;
      const fields: Array<[string, string]> = [
        ...addressed.routes.map((r): [string, string] => ['Route', r]),
        ['From', tagged(this.init.localUri, this.init.localTag)],
        ['To', tagged(this.init.remoteUri, this.init.remoteTag)],
        ['Call-ID', this.callId],
        ['CSeq', `${seq} ${method}`],
        ...headers,
      ];
      const req = newRequest(method, addressed.requestUri, fields, body);
      onSeq?.(seq);
      round?.authorize(req);
      const res = await this.core.transactions.request(this.core.stamp(req, hop), hop);
      if (round?.challenged(res)) continue;
      // §12.2.1.2: 481 or 408 to a request inside the dialog means the dialog is gone.
      if ((res.status === 481 || res.status === 408) && method !== 'BYE') this.#end({ by: 'error', reason: `${res.status} ${res.reason}` });
      return { res, seq };
    }
  }

  #end(end: DialogEnd): void {
    if (this.#state === 'terminated') return;
    this.#state = 'terminated';
    // A transfer's subscription outlives the call (RFC 6665 §4.5.2): the far end often hangs
    // up once the transfer worked, and its last NOTIFY may come after the BYE.
    void this.#refers.drained().then(() => this.core.unregisterDialog(this.key));
    this.emit('ended', end);
    this.#resolveEnded(end);
  }
}

function seqOf(msg: { headers: { get(name: string): string | undefined } }): number {
  try {
    return parseCSeq(msg.headers.get('CSeq') ?? '').seq;
  } catch {
    return -1;
  }
}
