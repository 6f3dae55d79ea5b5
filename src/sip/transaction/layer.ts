// The transaction tables: one bounded map for client and one for server transactions.
// When they are full new work is refused (the caller answers 503) rather than growing. The
// server side may not take the whole table (our own requests, a BYE above all, keep room), nor
// may one source address take more than its share; a source at its share, or a full table,
// recycles the oldest transaction that has answered and only waits for retransmissions.
import type { SipRequest, SipResponse } from '../message.ts';
import { InviteClientTransaction, NonInviteClientTransaction } from './client.ts';
import type { ClientTransactionUser } from './client.ts';
import type { Hop, MessageSender, SipTimerValues } from './common.ts';
import { clientKey, serverKey } from './keys.ts';
import { InviteServerTransaction, NonInviteServerTransaction } from './server.ts';

export type ServerTransaction = InviteServerTransaction | NonInviteServerTransaction;
export type ClientTransaction = InviteClientTransaction | NonInviteClientTransaction;

export interface TransactionLimits {
  /** Client and server transactions together. */
  maxTransactions: number;
  /** Of those, never taken by server transactions: room for our own requests whatever arrives. */
  clientReserve: number;
  /** Server transactions one source address may hold at once. */
  perSource: number;
}

export const DEFAULT_TRANSACTION_LIMITS: TransactionLimits = { maxTransactions: 5000, clientReserve: 1000, perSource: 1000 };

export class TransactionLimitError extends Error {
  override name = 'TransactionLimitError';
}

/** Thrown into request() callers: Timer F fired, or the transport failed. */
export class RequestFailedError extends Error {
  override name = 'RequestFailedError';
  constructor(readonly reason: 'timeout' | 'transport', message: string) {
    super(message);
  }
}

export class TransactionLayer {
  readonly #client = new Map<string, ClientTransaction>();
  readonly #server = new Map<string, ServerTransaction>();
  /** Each source address's server transactions, oldest first. */
  readonly #bySource = new Map<string, Set<ServerTransaction>>();
  /** Requests refused for lack of room (answered 503), since start. */
  refused = 0;

  constructor(
    private readonly sender: MessageSender,
    private readonly timers: SipTimerValues,
    private readonly limits: TransactionLimits,
  ) {}

  get size(): number {
    return this.#client.size + this.#server.size;
  }

  get full(): boolean {
    return this.size >= this.limits.maxTransactions;
  }

  #clientKeyOf(req: SipRequest): string {
    const key = clientKey(req);
    if (!key) throw new TypeError('request needs a Via branch and a CSeq');
    if (this.#client.has(key)) throw new TypeError(`transaction ${key} already running`);
    if (this.full) throw new TransactionLimitError(`${this.limits.maxTransactions} transactions in progress`);
    return key;
  }

  startInvite(req: SipRequest, hop: Hop, tu: ClientTransactionUser): InviteClientTransaction {
    const key = this.#clientKeyOf(req);
    const tx = new InviteClientTransaction(key, req, hop, this.sender, this.timers, tu, (k) => this.#client.delete(k));
    this.#client.set(key, tx);
    tx.start();
    return tx;
  }

  startRequest(req: SipRequest, hop: Hop, tu: ClientTransactionUser): NonInviteClientTransaction {
    const key = this.#clientKeyOf(req);
    const tx = new NonInviteClientTransaction(key, req, hop, this.sender, this.timers, tu, (k) => this.#client.delete(k));
    this.#client.set(key, tx);
    tx.start();
    return tx;
  }

  /** One non-INVITE request to its final response. Rejects with RequestFailedError. */
  request(req: SipRequest, hop: Hop, onProvisional?: (res: SipResponse) => void): Promise<SipResponse> {
    return new Promise<SipResponse>((resolve, reject) => {
      this.startRequest(req, hop, {
        ...(onProvisional ? { onProvisional } : {}),
        onFinal: resolve,
        onTimeout: () => reject(new RequestFailedError('timeout', `no answer to ${req.method}`)),
        onTransportError: (message) => reject(new RequestFailedError('transport', message)),
      });
    });
  }

  /** Hands a response to its client transaction; false when none matches. */
  receiveResponse(res: SipResponse): boolean {
    const key = clientKey(res);
    const tx = key ? this.#client.get(key) : undefined;
    if (!tx) return false;
    tx.receive(res);
    return true;
  }

  findServer(req: SipRequest, method?: string): ServerTransaction | undefined {
    const key = serverKey(req, method);
    return key ? this.#server.get(key) : undefined;
  }

  /** A new server transaction, or null when the request cannot be keyed or there is no room for it. */
  createServer(req: SipRequest, hop: Hop): ServerTransaction | null {
    const key = serverKey(req);
    if (!key || this.#server.has(key)) return null;
    const mine = this.#bySource.get(hop.address) ?? new Set<ServerTransaction>();
    if (!this.#room(mine)) {
      this.refused++;
      return null;
    }
    const done = (k: string): void => {
      const tx = this.#server.get(k);
      this.#server.delete(k);
      if (tx) mine.delete(tx);
      if (mine.size === 0 && this.#bySource.get(hop.address) === mine) this.#bySource.delete(hop.address);
    };
    const tx = req.method === 'INVITE'
      ? new InviteServerTransaction(key, req, hop, this.sender, this.timers, done)
      : new NonInviteServerTransaction(key, req, hop, this.sender, this.timers, done);
    this.#server.set(key, tx);
    mine.add(tx);
    this.#bySource.set(hop.address, mine);
    return tx;
  }

  /** Makes room for one more of `mine` (a source's transactions), recycling lingering ones; false when none can go. */
  #room(mine: Set<ServerTransaction>): boolean {
    const { maxTransactions, clientReserve, perSource } = this.limits;
    if (mine.size >= perSource && !evictOldest(mine.values())) return false;
    const serverFull = this.#server.size >= maxTransactions - clientReserve || this.size >= maxTransactions;
    return !serverFull || evictOldest(this.#server.values());
  }

  closeAll(): void {
    for (const tx of [...this.#client.values()]) tx.abort('SIP endpoint closed');
    for (const tx of [...this.#server.values()]) tx.terminate();
  }
}

/** Ends the oldest transaction that has answered and only absorbs retransmissions; false when there is none. */
function evictOldest(transactions: Iterable<ServerTransaction>): boolean {
  for (const tx of transactions) {
    if (!tx.lingering) continue;
    tx.terminate();
    return true;
  }
  return false;
}
