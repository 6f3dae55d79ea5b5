import { Gauge, type Registry } from 'prom-client';
import type { Context } from '../context.ts';
import { checkAddress } from '../egress/policy.ts';
import { describeTakenPort } from '../port-holder.ts';
import { SipEndpoint } from '../sip/endpoint.ts';
import type { MediaSettings } from '../sip/call-media.ts';
import { RtpPortPool } from '../sip/rtp/ports.ts';
import type { RtpLateness } from '../sip/rtp/media-thread.ts';
import { latenessGauges } from '../voice/lateness-gauges.ts';

/**
 * The SIP side of one process: its endpoint (one UDP/TCP port for every call and registration)
 * and its RTP port pool. Built once by the composition when PARLEY_DIALER is `sip`, closed with
 * the process.
 */
export interface Telephony {
  readonly endpoint: SipEndpoint;
  /** What every call's RTP session is opened with: the port pool, the SDP address, the egress policy. */
  media(): MediaSettings;
  /** The media thread's pacing: how late RTP frames went out after their place on the 20 ms grid. */
  rtpLateness(): RtpLateness;
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
  const pool = new RtpPortPool(config.rtpPorts, config.sipHost, ctx.log);
  const mediaAddress = config.mediaAddress ?? endpoint.advertised.host;
  return {
    endpoint,
    media: () => ({ pool, mediaAddress, allowAddress: (ip) => checkAddress(ip, allow).allowed, clock: ctx.clock, log: ctx.log, inactivityMs: 30_000 }),
    rtpLateness: () => pool.stats(),
    async close() {
      await endpoint.close();
      await pool.close();
    },
  };
}

/**
 * The telephony of `parley serve` with PARLEY_DIALER=sip, with its start-up line. SIP is the
 * default, and a default must not stop the API from starting: when the SIP port cannot be bound
 * (taken by a softphone or another Parley, or a privileged port) and PARLEY_DIALER was not set,
 * it warns and answers null (no dialer: task attempts fail "no dialer configured"). An explicit
 * PARLEY_DIALER=sip fails the start instead, saying why.
 */
export async function openTelephony(ctx: Pick<Context, 'config' | 'egress' | 'clock' | 'log'>): Promise<Telephony | null> {
  const { config, log } = ctx;
  let telephony: Telephony;
  try {
    telephony = await startTelephony(ctx);
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === 'EADDRINUSE' ? describeTakenPort(config.sipPort, ['udp', 'tcp'], { host: config.sipHost }) : err instanceof Error ? err.message : String(err);
    const where = `${config.sipHost}:${config.sipPort}`;
    if (config.dialerExplicit) throw new Error(`PARLEY_DIALER=sip: the SIP endpoint could not bind ${where} (${why}); free the port, set PARLEY_SIP_PORT, or PARLEY_DIALER=none`, { cause: err });
    log.warn({ check: 'sip', err: why }, `SIP dialer off: could not bind ${where} (${why}); task calls fail until PARLEY_SIP_PORT names a free port (or set PARLEY_DIALER=none to silence this)`);
    return null;
  }
  const { host } = telephony.endpoint.advertised;
  log.info({ check: 'sip' }, `SIP dialer on udp and tcp ${config.sipHost}:${telephony.endpoint.port} (advertised as ${host}), RTP ports ${config.rtpPorts.min}-${config.rtpPorts.max}; PARLEY_DIALER=none turns it off`);
  return telephony;
}

/** The media thread's figures on /metrics, beside the voice pacer's (which, for SIP calls, times the hand-over). */
export function telephonyMetrics(registry: Registry, telephony: Telephony): void {
  latenessGauges(registry, 'parley_rtp', {
    lateness: 'How late RTP frames of SIP calls went out after their place on their talkspurt\'s 20 ms grid, since start',
    frames: 'RTP frames of SIP calls sent by the media thread on their grid, since start',
  }, () => telephony.rtpLateness());
  const sip = [
    ['parley_sip_bye_failures', 'BYEs of ours that got no final answer or could not be sent (the far end may have kept its leg up), since start', 'byeFailures'],
    ['parley_sip_requests_refused', 'SIP requests answered 503 for want of room in the transaction table (whole, or the sender\'s share), since start', 'refusedRequests'],
    ['parley_sip_messages_dropped', 'SIP messages dropped unread by the per-address rate limit (messages or bytes), since start', 'droppedMessages'],
  ] as const;
  for (const [name, help, key] of sip) {
    new Gauge({
      name, help, registers: [registry],
      collect() {
        this.set(telephony.endpoint.stats()[key]);
      },
    });
  }
  new Gauge({
    name: 'parley_rtp_late_handovers', help: 'RTP frames of SIP calls the main thread handed to the media thread after their time (later than the lead), since start', registers: [registry],
    collect() {
      this.set(telephony.rtpLateness().lateHandovers);
    },
  });
}
