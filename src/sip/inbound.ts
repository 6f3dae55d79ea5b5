// A call that arrived (UAS side of an INVITE): who calls whom, the SDP offer, and the
// three things the application can do with it: ring, answer or reject. A CANCEL from
// the caller ends it with 487 and aborts `signal`.
import { EventEmitter } from 'node:events';
import { DigestSession } from './auth.ts';
import type { SipCore } from './core.ts';
import { Dialog } from './dialog.ts';
import { headerParams, parseCSeq, splitHeaderList } from './message.ts';
import type { SipRequest } from './message.ts';
import { ALLOW, REASONS, makeResponse } from './requests.ts';
import type { InviteServerTransaction } from './transaction/server.ts';
import type { Source } from './endpoint-transport.ts';
import { decodeUser, formatNameAddr, formatUri, parseNameAddr } from './uri.ts';

export interface CallParty {
  display: string | null;
  /** The user part, %-decoded (usually the phone number). */
  user: string | null;
  uri: string;
}

const PRIVATE = new Set(['id', 'user', 'header']);

function partyOf(value: string | undefined): CallParty {
  try {
    const addr = parseNameAddr(value ?? '');
    return { display: addr.display, user: addr.uri.user === null ? null : decodeUser(addr.uri.user), uri: formatUri(addr.uri) };
  } catch {
    return { display: null, user: null, uri: value ?? '' };
  }
}

/** The header value without its tag parameter, as it goes into the dialog's URIs. */
function untagged(value: string): string {
  const addr = parseNameAddr(value);
  const params = new Map(addr.params);
  params.delete('tag');
  return formatNameAddr({ display: addr.display, uri: addr.uri, params });
}

export class IncomingCall extends EventEmitter<{ cancelled: [] }> {
  readonly callId: string;
  readonly requestUri: string;
  readonly from: CallParty;
  readonly to: CallParty;
  /** The caller withheld its identity: an anonymous From, or Privacy: id / user / header (RFC 3323, 3325). */
  readonly anonymous: boolean;
  readonly privacy: string[];
  readonly source: Source;
  /** The SDP offer ('' when the INVITE carried none: then answer() takes our offer). */
  readonly sdp: string;
  readonly signal: AbortSignal;
  #state: 'offered' | 'answered' | 'rejected' | 'cancelled' = 'offered';
  readonly #tag: string;
  readonly #abort = new AbortController();
  readonly #expiry: NodeJS.Timeout;

  constructor(private readonly core: SipCore, private readonly req: SipRequest, private readonly tx: InviteServerTransaction, source: Source) {
    super();
    this.#tag = tx.toTag;
    this.callId = req.headers.get('Call-ID') ?? '';
    this.requestUri = req.uri;
    this.from = partyOf(req.headers.get('From'));
    this.to = partyOf(req.headers.get('To'));
    this.privacy = (req.headers.get('Privacy') ?? '').split(/[;,]/).map((p) => p.trim().toLowerCase()).filter(Boolean);
    const fromUri = this.from.uri.toLowerCase();
    this.anonymous = this.privacy.some((p) => PRIVATE.has(p)) || this.from.user?.toLowerCase() === 'anonymous' || fromUri.includes('@anonymous.invalid') || /^anonymous$/i.test(this.from.display ?? '');
    this.source = source;
    this.sdp = /^application\/sdp/i.test(req.headers.get('Content-Type') ?? '') ? req.body.toString('utf8') : '';
    this.signal = this.#abort.signal;
    tx.tu = {
      onCancel: () => {
        if (this.#state !== 'offered') return;
        this.#state = 'cancelled';
        clearTimeout(this.#expiry);
        tx.respond(makeResponse(req, 487, { toTag: this.#tag }));
        this.#abort.abort();
        this.emit('cancelled');
      },
    };
    // A handler that never decides must not hold the transaction (and its table slot) forever.
    this.#expiry = setTimeout(() => {
      this.reject(480);
      this.#abort.abort();
    }, core.unansweredInviteMs);
    this.#expiry.unref();
  }

  get state(): 'offered' | 'answered' | 'rejected' | 'cancelled' {
    return this.#state;
  }

  /** 180 Ringing, or 183 Session Progress with an SDP answer for early media. */
  ringing(options: { sdp?: string } = {}): void {
    if (this.#state !== 'offered') return;
    const body = options.sdp ? Buffer.from(options.sdp) : undefined;
    const headers: Array<[string, string]> = [['Contact', this.#contact()], ...this.#recordRoutes()];
    if (body) headers.push(['Content-Type', 'application/sdp']);
    this.tx.respond(makeResponse(this.req, body ? 183 : 180, { toTag: this.#tag, headers, ...(body ? { body } : {}) }));
  }

  /** 200 OK with our SDP; the call is then a Dialog. Throws when it was cancelled meanwhile. */
  answer(sdp: string, options: { credentials?: { username: string; password: string } } = {}): Dialog {
    if (this.#state !== 'offered') throw new Error(`cannot answer a call that is ${this.#state}`);
    const contact = this.#contact();
    const recordRoutes = this.#recordRoutes();
    const dialog = new Dialog(this.core, {
      role: 'uas',
      callId: this.callId,
      localTag: this.#tag,
      remoteTag: headerParams(this.req.headers.get('From') ?? '').get('tag') ?? '',
      localUri: untagged(this.req.headers.get('To') ?? ''),
      remoteUri: untagged(this.req.headers.get('From') ?? ''),
      localSeq: 1 + Math.floor(Math.random() * 10_000),
      remoteSeq: parseCSeq(this.req.headers.get('CSeq') ?? '').seq,
      remoteTarget: formatUri(parseNameAddr(splitHeaderList(this.req.headers.get('Contact') ?? '')[0] ?? '').uri),
      routeSet: recordRoutes.map(([, v]) => v),
      localContact: contact,
      localSdp: sdp,
      remoteSdp: this.sdp,
      ...(options.credentials ? { credentials: new DigestSession(options.credentials) } : {}),
    });
    if (!this.core.registerDialog(dialog)) {
      this.reject(503);
      throw new Error('too many dialogs');
    }
    this.#state = 'answered';
    clearTimeout(this.#expiry);
    void dialog.expectAck(this.tx, parseCSeq(this.req.headers.get('CSeq') ?? '').seq, { initial: true, offerSent: this.sdp === '' });
    const headers: Array<[string, string]> = [['Contact', contact], ...recordRoutes, ['Allow', ALLOW], ['Content-Type', 'application/sdp']];
    this.tx.respond(makeResponse(this.req, 200, { toTag: this.#tag, headers, body: Buffer.from(sdp) }));
    return dialog;
  }

  /** A final failure response: 486 Busy Here by default, 488 for no common codec, 603 Decline... */
  reject(status = 486, reason?: string): void {
    if (this.#state !== 'offered') return;
    if (!Number.isInteger(status) || status < 300 || status > 699) throw new RangeError(`invalid rejection status ${status}`);
    this.#state = 'rejected';
    clearTimeout(this.#expiry);
    this.tx.respond(makeResponse(this.req, status, { toTag: this.#tag, reason: reason ?? REASONS[status] ?? 'Rejected' }));
  }

  #contact(): string {
    return this.core.contact(this.to.user ?? 'parley', this.source.transport);
  }

  /** Record-Route is copied into dialog-creating responses, in order (RFC 3261 §12.1.1). */
  #recordRoutes(): Array<[string, string]> {
    return this.req.headers.getAll('Record-Route').flatMap(splitHeaderList).map((v): [string, string] => ['Record-Route', v]);
  }
}
