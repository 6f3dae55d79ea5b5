// Placing a call through a trunk (UAC side of an INVITE, RFC 3261 §13.2): digest auth,
// progress reports, CANCEL on abort or ring timeout, ACK, and the dialog on a 2xx.
import { DigestSession } from './auth.ts';
import type { SipCore } from './core.ts';
import { Dialog } from './dialog.ts';
import { routeSetOf } from './dialog-route.ts';
import { headerParams, parseCSeq, splitHeaderList } from './message.ts';
import type { SipRequest, SipResponse } from './message.ts';
import { EgressRefusedError } from './register.ts';
import { ALLOW, newRequest, token } from './requests.ts';
import { ResolveError } from './resolve.ts';
import { resolveTrunk } from './target.ts';
import type { Trunk } from './target.ts';
import type { Hop } from './transaction/common.ts';
import { escapeUser, formatHost, formatUri, parseNameAddr, parseUri } from './uri.ts';
import { OutboundAttempt } from './outbound-attempt.ts';

export interface CallProgress {
  status: number;
  reason: string;
  /** The SDP of a 183 (early media: start RTP now), else null. */
  sdp: string | null;
  /** The address the INVITE went to and its answers come from (RTP latching may learn it). */
  signalAddress: string;
}

export interface PlaceCallOptions {
  trunk: Trunk;
  /** An E.164 number (`+4930123456`) or a SIP URI. */
  target: string;
  /** The caller: a number or user for From. */
  from: string;
  fromDisplayName?: string | null;
  sdpOffer: string;
  /** No answer within this long after the INVITE: CANCEL (PARLEY_RING_SECONDS). */
  ringTimeoutMs: number;
  /** Aborting sends CANCEL while ringing, BYE once answered. */
  signal?: AbortSignal;
  onProgress?: (progress: CallProgress) => void;
  /** Extra headers for the INVITE (e.g. X- headers a PBX routes on). */
  headers?: Array<[string, string]>;
}

export type OutboundResult =
  | { outcome: 'answered'; dialog: Dialog; remoteSdp: string; signalAddress: string }
  /** The far end said no: the final status and reason as received. */
  | { outcome: 'rejected'; status: number; reason: string }
  /** We gave up: our AbortSignal or the ring timeout. `status` is the INVITE's final answer (487), null if none came. */
  | { outcome: 'cancelled'; by: 'signal' | 'ring-timeout'; status: number | null; reason: string }
  /** No SIP answer at all, or we could not send: the integrator may retry. */
  | { outcome: 'failed'; reason: 'timeout' | 'transport' | 'unresolvable' | 'egress-refused' | 'overloaded'; message: string };

const E164 = /^\+[1-9]\d{1,14}$/;

/** The Request-URI for `target` at the trunk. */
export function targetUri(target: string, trunk: Trunk): string {
  const t = target.trim();
  if (/^sips?:/i.test(t)) return formatUri(parseUri(t));
  if (!E164.test(t)) throw new TypeError(`target must be an E.164 number or a SIP URI, got ${JSON.stringify(t.slice(0, 40))}`);
  const port = trunk.port ? `:${trunk.port}` : '';
  const transport = trunk.transport === 'udp' ? '' : `;transport=${trunk.transport}`;
  return `sip:${escapeUser(t)}@${formatHost(trunk.hostname.trim())}${port}${transport}`;
}

export async function placeCall(core: SipCore, options: PlaceCallOptions): Promise<OutboundResult> {
  const uri = targetUri(options.target, options.trunk);
  if (!options.from || /[\s<>"]/.test(options.from)) throw new TypeError('from must be a number or SIP user');
  let hops: Hop[];
  try {
    hops = await resolveTrunk(options.trunk, core.policy);
  } catch (err) {
    if (err instanceof EgressRefusedError) return { outcome: 'failed', reason: 'egress-refused', message: err.message };
    if (err instanceof ResolveError) return { outcome: 'failed', reason: 'unresolvable', message: err.message };
    throw err;
  }
  const credentials = new DigestSession({ username: options.trunk.username, password: options.trunk.password });
  let result: OutboundResult = { outcome: 'failed', reason: 'unresolvable', message: 'no address' };
  for (const hop of hops) {
    const ids = newCallIds();
    const attempt = new OutboundAttempt({
      core, options, hop, credentials, seq: ids.seq,
      invite: buildInvite(core, options, uri, hop, ids),
      makeDialog: (res, invite) => dialogFrom(core, options, res, invite, credentials),
    });
    result = await attempt.run();
    // RFC 3263 §4.3: fail over to the next address only when this one never answered.
    if (result.outcome !== 'failed' || attempt.answeredAtAll || options.signal?.aborted) return result;
  }
  return result;
}

/** The INVITE we send first; retries after a challenge copy it with CSeq + 1. */
function buildInvite(core: SipCore, options: PlaceCallOptions, uri: string, hop: Hop, ids: { callId: string; fromTag: string; seq: number }): SipRequest {
  const trunkHost = formatHost(options.trunk.hostname.trim());
  const display = options.fromDisplayName ? `"${options.fromDisplayName.replace(/[\\"\r\n]/g, '')}" ` : '';
  return newRequest('INVITE', uri, [
    ['From', `${display}<sip:${escapeUser(options.from)}@${trunkHost}>;tag=${ids.fromTag}`],
    ['To', `<${uri}>`],
    ['Call-ID', ids.callId],
    ['CSeq', `${ids.seq} INVITE`],
    ['Contact', core.contact(options.from, hop.transport)],
    ['Allow', ALLOW],
    ...(options.headers ?? []),
  ], { type: 'application/sdp', data: Buffer.from(options.sdpOffer) });
}

const newCallIds = (): { callId: string; fromTag: string; seq: number } => ({ callId: `${token(12)}@parley`, fromTag: token(6), seq: 1 + Math.floor(Math.random() * 1000) });

/** The dialog a 2xx creates (RFC 3261 §12.1.2). */
function dialogFrom(core: SipCore, options: PlaceCallOptions, res: SipResponse, invite: SipRequest, credentials: DigestSession): Dialog {
  const contact = splitHeaderList(res.headers.get('Contact') ?? '')[0];
  const to = parseNameAddr(res.headers.get('To') ?? '');
  return new Dialog(core, {
    role: 'uac',
    callId: invite.headers.get('Call-ID') ?? '',
    localTag: headerParams(invite.headers.get('From') ?? '').get('tag') ?? '',
    remoteTag: to.params.get('tag') ?? '',
    localUri: (invite.headers.get('From') ?? '').replace(/;\s*tag=[^;]*/i, ''),
    remoteUri: `<${formatUri(to.uri)}>`,
    localSeq: parseCSeq(invite.headers.get('CSeq') ?? '').seq,
    remoteSeq: null,
    // A 2xx without Contact is broken; the Request-URI is the best guess for in-dialog requests.
    remoteTarget: contact ? formatUri(parseNameAddr(contact).uri) : invite.uri,
    routeSet: routeSetOf(res.headers.getAll('Record-Route'), 'uac'),
    localContact: invite.headers.get('Contact') ?? '',
    localSdp: options.sdpOffer,
    remoteSdp: res.body.toString('utf8'),
    credentials,
  });
}
