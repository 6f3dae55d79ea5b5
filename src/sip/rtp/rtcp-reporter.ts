// The RTCP side of one session: an SR (or RR when we sent nothing) about every 5 s, and
// what the far end reports about our stream: loss, jitter and round-trip time.
import type { Clock } from '../../clock.ts';
import { buildReport, ntpFromMs, ntpMiddle } from './rtcp.ts';
import type { ParsedRtcp, ReportBlock, SenderInfo } from './rtcp.ts';

export interface RemoteReport {
  /** Cumulative packets of ours the far end has not received. */
  packetsLost: number;
  /** Share lost in the far end's last interval, 0..1. */
  fractionLost: number;
  jitterMs: number;
  /** From LSR/DLSR (RFC 3550 §6.4.1); null until the far end echoes one of our SRs. */
  rttMs: number | null;
  receivedAt: Date;
}

export interface ReporterDeps {
  ssrc: number;
  cname: string;
  clock: Clock;
  /** Monotonic ms, for DLSR. */
  now: () => number;
  intervalMs: number;
  send(packet: Buffer): void;
  /** Our sender info when we sent RTP since the last report, else null (an RR goes out). */
  senderInfo(): SenderInfo | null;
  /** Our report about the far end's stream (without LSR/DLSR, filled in here), or null. */
  block(): Omit<ReportBlock, 'lsr' | 'dlsr'> | null;
}

export class RtcpReporter {
  #timer: NodeJS.Timeout | undefined;
  #lastSr: { middle: number; at: number } | null = null;
  remote: RemoteReport | null = null;
  sent = 0;
  received = 0;

  constructor(private readonly deps: ReporterDeps) {}

  start(): void {
    if (this.#timer) return;
    // RFC 3550 §6.3.5 randomises the interval (0.5 to 1.5 of it) so reports do not synchronise.
    const next = (): void => {
      this.#timer = setTimeout(() => {
        this.sendNow();
        next();
      }, this.deps.intervalMs * (0.5 + Math.random()));
    };
    next();
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** A report now; with `bye`, RTCP BYE follows in the same compound packet (the last one we send). */
  sendNow(options: { bye?: boolean } = {}): void {
    const block = this.deps.block();
    const full: ReportBlock | null = block
      ? {
          ...block,
          lsr: this.#lastSr?.middle ?? 0,
          dlsr: this.#lastSr ? Math.round(((this.deps.now() - this.#lastSr.at) / 1000) * 65536) : 0,
        }
      : null;
    this.deps.send(buildReport({ ssrc: this.deps.ssrc, sender: this.deps.senderInfo(), block: full, cname: this.deps.cname, bye: options.bye === true }));
    this.sent += 1;
  }

  /** Takes what a compound packet of the far end's (parsed by parseRtcp) says about our stream. */
  take(parsed: ParsedRtcp): void {
    this.received += 1;
    const nowNtp = ntpFromMs(this.deps.clock.now().getTime());
    for (const report of parsed.reports) {
      if (report.ssrc === this.deps.ssrc) continue;
      if (report.sender) this.#lastSr = { middle: ntpMiddle(report.sender.ntpTimestamp), at: this.deps.now() };
      const aboutUs = report.reports.find((r) => r.ssrc === this.deps.ssrc);
      if (!aboutUs) continue;
      let rttMs: number | null = null;
      if (aboutUs.lsr !== 0) {
        const units = (ntpMiddle(nowNtp) - aboutUs.lsr - aboutUs.dlsr) >>> 0;
        // A negative result wraps to a huge number: clocks disagree, report nothing.
        if (units < 65536 * 60) rttMs = (units / 65536) * 1000;
      }
      this.remote = {
        packetsLost: aboutUs.packetsLost,
        fractionLost: aboutUs.fractionLost / 256,
        jitterMs: aboutUs.jitter / 8,
        rttMs,
        receivedAt: this.deps.clock.now(),
      };
    }
  }
}
