// Answering digest challenges on requests we send (RFC 3261 §22.2, §22.3). A session keeps
// the challenges it has seen, so later requests reuse the nonce with a growing nonce count.
// Each request runs one round: a fresh challenge earns one retry with credentials; once
// ours were refused, only a stale nonce earns another (and, where the caller allows it, one
// re-challenge of credentials already proven).
import { buildDigestAuthorization, chooseDigestChallenge, parseDigestChallenges } from './digest.ts';
import type { DigestChallenge } from './digest.ts';
import type { SipRequest, SipResponse } from './message.ts';

export interface SipCredentials {
  username: string;
  password: string;
}

export type AuthHeader = 'Authorization' | 'Proxy-Authorization';

export class DigestSession {
  readonly #creds = new Map<AuthHeader, { challenge: DigestChallenge; nc: number }>();

  constructor(private readonly credentials: SipCredentials) {}

  /** The challenge handling of one request (its retries share the round). */
  round(options: { rechallenge?: boolean } = {}): DigestRound {
    return new DigestRound(this, options.rechallenge ?? false);
  }

  /** Adds our credentials to `req`; returns which headers it carries. */
  authorize(req: SipRequest): Set<AuthHeader> {
    for (const [name, cred] of this.#creds) {
      cred.nc += 1;
      req.headers.set(name, buildDigestAuthorization({
        challenge: cred.challenge,
        username: this.credentials.username,
        password: this.credentials.password,
        method: req.method,
        uri: req.uri,
        nc: cred.nc,
        body: req.body,
      }));
    }
    return new Set(this.#creds.keys());
  }

  /** Stores the challenge a 401/407 carries, or returns null when there is none we can answer. */
  learn(res: SipResponse): { header: AuthHeader; challenge: DigestChallenge } | null {
    if (res.status !== 401 && res.status !== 407) return null;
    const header: AuthHeader = res.status === 401 ? 'Authorization' : 'Proxy-Authorization';
    const challenge = chooseDigestChallenge(parseDigestChallenges(res.headers.getAll(res.status === 401 ? 'WWW-Authenticate' : 'Proxy-Authenticate')));
    if (!challenge) return null;
    this.#creds.set(header, { challenge, nc: 0 });
    return { header, challenge };
  }
}

export class DigestRound {
  #sentWith: ReadonlySet<AuthHeader> = new Set();
  #staleRetried = false;

  constructor(private readonly session: DigestSession, private rechallenge: boolean) {}

  authorize(req: SipRequest): void {
    this.#sentWith = this.session.authorize(req);
  }

  /** Reads a 401/407; true when the request should be sent again with (new) credentials. */
  challenged(res: SipResponse): boolean {
    const sentWith = this.#sentWith;
    const learned = this.session.learn(res);
    if (!learned) return false;
    if (!sentWith.has(learned.header)) return true;
    // Our credentials were refused: only a stale nonce (or an allowed re-challenge) earns a retry.
    if (learned.challenge.stale && !this.#staleRetried) {
      this.#staleRetried = true;
      return true;
    }
    if (this.rechallenge) {
      this.rechallenge = false;
      return true;
    }
    return false;
  }
}
