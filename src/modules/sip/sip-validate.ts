import { isIP } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { checkAddress, type AllowList } from '../../egress/policy.ts';
import { badRequest } from '../../http/errors.ts';
import { EgressRefusedError, UNREGISTER_GRACE_MS, registerCheck, type RegisterCheckResult } from '../../sip/register.ts';
import { defaultPort } from '../../sip/resolve.ts';
import type { SipTransportName } from './sip-credentials.schemas.ts';

/**
 * The contract promises an answer within 10 s. The REGISTER exchange gets this much; a
 * successful one is followed by the un-REGISTER, which may take UNREGISTER_GRACE_MS more,
 * and the HTTP round trip needs a little on top.
 */
export const VALIDATE_BUDGET_MS = 10_000 - UNREGISTER_GRACE_MS - 500;

export interface SipTarget {
  hostname: string;
  port?: number | undefined;
  transport?: SipTransportName | undefined;
  username: string;
  password: string;
}

const LABEL = /^[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$/;

/** Why `hostname` cannot name a SIP server, or null when it can (syntax only; nothing is resolved). */
export function hostnameProblem(hostname: string): string | null {
  const help = 'must be a host name or an IP address, without scheme or port (the port goes in port)';
  const inner = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : null;
  if (inner !== null) return isIP(inner) === 6 ? null : help;
  if (hostname.includes(':')) return isIP(hostname) === 6 ? null : help;
  if (/^[\d.]+$/.test(hostname)) return isIP(hostname) === 4 ? null : 'is not a valid IPv4 address';
  const name = hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
  return name.length <= 253 && name.split('.').every((label) => LABEL.test(label)) ? null : help;
}

export function assertHostname(hostname: string): void {
  const problem = hostnameProblem(hostname);
  if (problem) throw badRequest('Invalid SIP server', [{ path: 'hostname', message: problem }]);
}

export const portOf = (target: { port?: number | undefined; transport?: SipTransportName | undefined }) =>
  target.port ?? defaultPort(target.transport ?? 'udp');

/**
 * One REGISTER with digest authentication, then an un-REGISTER. Every resolved address goes
 * through the egress policy first; when all are refused nothing is sent and the answer is a
 * 400 on `hostname`. The password is only handed to the SIP client, never logged.
 */
export async function validateSipTarget(target: SipTarget, deps: { allow: AllowList; log: FastifyBaseLogger }): Promise<RegisterCheckResult> {
  assertHostname(target.hostname);
  try {
    return await registerCheck(
      {
        hostname: target.hostname,
        // No port: RFC 3263 (SRV `_sip._udp.` / `_sip._tcp.` / `_sips._tcp.`, then A/AAAA on the
        // transport's default port). A port in the body wins over SRV.
        port: target.port ?? null,
        transport: target.transport ?? 'udp',
        username: target.username,
        password: target.password,
        timeoutMs: VALIDATE_BUDGET_MS,
      },
      { checkAddress: (ip) => checkAddress(ip, deps.allow), log: deps.log },
    );
  } catch (err) {
    if (!(err instanceof EgressRefusedError)) throw err;
    // The log keeps the address and the reason; the tenant learns only that the policy said no,
    // never what the name resolved to (internal DNS answers are not theirs to read).
    deps.log.info({ hostname: target.hostname, address: err.address, reason: err.reason }, 'sip validate: refused by the egress policy');
    throw badRequest('The SIP server address is refused by the egress policy', [{
      path: 'hostname',
      message: 'is refused by the egress policy (it is, or resolves to, a private, loopback, link-local or reserved address); nothing was sent',
    }]);
  }
}
