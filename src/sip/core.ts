// What dialogs, calls and registrations need from the endpoint. An interface rather
// than the class itself, so those modules do not import the endpoint (and each other).
import type { Clock } from '../clock.ts';
import type { SipLogger } from './log.ts';
import type { SipMessage, SipRequest, SipResponse } from './message.ts';
import type { SipTransport } from './resolve.ts';
import type { TargetPolicy } from './target.ts';
import type { Hop, SipTimerValues } from './transaction/common.ts';
import type { ServerTransaction, TransactionLayer } from './transaction/layer.ts';

export interface DialogHandle {
  readonly key: string;
  /** A request inside this dialog (never ACK or CANCEL); answer it through `tx`. */
  handleRequest(req: SipRequest, tx: ServerTransaction): void;
  /** An ACK for a 2xx of ours, matched by Call-ID and tags. */
  handleAck(ack: SipRequest): void;
  /** A 2xx to our INVITE that arrived again (or late): our ACK was lost. */
  handle2xxRetransmission(res: SipResponse): void;
  /** The endpoint is going away: end without sending anything. */
  abandon(reason: string): void;
}

/** Counts the endpoint keeps for /metrics. */
export interface SipCounters {
  /** BYEs of ours that got no final answer, or could not be sent at all. */
  byeFailures: number;
}

export interface SipCore {
  readonly log: SipLogger;
  readonly counters: SipCounters;
  readonly clock: Clock;
  readonly timers: SipTimerValues;
  readonly transactions: TransactionLayer;
  readonly policy: TargetPolicy;
  /** An incoming call nobody answers or rejects within this long gets 480 (bounds the INVITE transactions). */
  readonly unansweredInviteMs: number;
  /** Our address and port as written into Via and Contact. */
  readonly advertised: { host: string; port: number };
  send(msg: SipMessage, hop: Hop): Promise<void>;
  /** Our Via on top of `req`, for the transport of `hop`. */
  stamp(req: SipRequest, hop: Hop): SipRequest;
  contact(user: string, transport: SipTransport): string;
  registerDialog(dialog: DialogHandle): boolean;
  unregisterDialog(key: string): void;
}

export const dialogKey = (callId: string, localTag: string, remoteTag: string): string => `${callId}|${localTag}|${remoteTag}`;
