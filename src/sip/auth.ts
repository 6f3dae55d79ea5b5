// Answering digest challenges on requests we send (RFC 3261 §22.2, §22.3): a fresh
// challenge earns one retry with credentials; once ours were refused, only a stale
// nonce earns another. Credentials are kept so later requests reuse the nonce.
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
  #staleRetried = false;

  constructor(private readonly credentials: SipCredentials) {}

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

  /** Reads a 401/407; true when the request should be sent again with credentials. */
  challenged(res: SipResponse, sentWith: ReadonlySet<AuthHeader>): boolean {
    if (res.status !== 401 && res.status !== 407) return false;
    const header: AuthHeader = res.status === 401 ? 'Authorization' : 'Proxy-Authorization';
    const values = res.headers.getAll(res.status === 401 ? 'WWW-Authenticate' : 'Proxy-Authenticate');
    const challenge = chooseDigestChallenge(parseDigestChallenges(values));
    if (!challenge) return false;
    if (sentWith.has(header)) {
      if (!challenge.stale || this.#staleRetried) return false;
      this.#staleRetried = true;
    }
    this.#creds.set(header, { challenge, nc: 0 });
    return true;
  }
}
