import type { Context } from '../../context.ts';
import { checkAddress } from '../../egress/policy.ts';
import { SipEndpoint } from '../../sip/endpoint.ts';
import type { MediaSettings } from '../../sip/call-media.ts';
import { RtpPortPool } from '../../sip/rtp/ports.ts';

/**
 * The SIP side of one process: its endpoint (one UDP/TCP port for every call and registration)
 * and its RTP port pool. Built once by the composition when PARLEY_DIALER is `sip`, closed with
 * the process.
 */
export interface Telephony {
  readonly endpoint: SipEndpoint;
  /** What every call's RTP session is opened with: the port pool, the SDP address, the egress policy. */
  media(): MediaSettings;
  close(): Promise<void>;
}

export async function startTelephony(ctx: Pick<Context, 'config' | 'egress' | 'clock' | 'log'>): Promise<Telephony> {
  const { config } = ctx;
  const allow = ctx.egress.allow;
  const endpoint = await SipEndpoint.start({
    host: config.sipHost,
    port: config.sipPort,
    ...(config.sipAdvertisedHost ? { advertisedHost: config.sipAdvertisedHost } : {}),
    clock: ctx.clock,
    log: ctx.log,
    policy: { checkAddress: (ip) => checkAddress(ip, allow) },
  });
  const pool = new RtpPortPool(config.rtpPorts, config.sipHost);
  const mediaAddress = config.mediaAddress ?? endpoint.advertised.host;
  return {
    endpoint,
    media: () => ({ pool, mediaAddress, allowAddress: (ip) => checkAddress(ip, allow).allowed, clock: ctx.clock, log: ctx.log, inactivityMs: 30_000 }),
    close: () => endpoint.close(),
  };
}
