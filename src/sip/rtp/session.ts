// One call's media: G.711 RTP on a port pair from the pool, symmetric (we send to where
// the far end's packets come from), a jitter buffer in front of 20 ms playout, RFC 4733
// DTMF both ways and RTCP reports. We number outgoing frames and the pool's media thread
// sends them 20 ms apart, so the caller may hand them over a few frames ahead.
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Clock } from '../../clock.ts';
import { systemClock } from '../../clock.ts';
import type { SipLogger } from '../log.ts';
import { silentLog } from '../log.ts';
import type { CodecName, Direction } from '../sdp.ts';
import { DtmfReceiver } from './dtmf.ts';
import { DtmfSender } from './dtmf-sender.ts';
import { SILENCE } from './g711.ts';
import { JitterBuffer } from './jitter-buffer.ts';
import type { JitterFrame, JitterStats } from './jitter-buffer.ts';
import { MAX_RTP_BYTES, RtpWriter, parseRtp } from './packet.ts';
import { Pacer } from './pacer.ts';
import type { Datagram, Pacing } from './media-thread.ts';
import type { PortLease, RtpPortPool } from './ports.ts';
import { ReceiveStats } from './receive-stats.ts';
import { RtcpReporter } from './rtcp-reporter.ts';
import type { RemoteReport } from './rtcp-reporter.ts';
import { ntpFromMs, parseRtcp } from './rtcp.ts';
import { Latch, learningSource } from './latch.ts';

export const FRAME_MS = 20;

export interface RtpSessionOptions {
  pool: RtpPortPool;
  /** Media to or from an address this refuses is dropped (the integrator passes the egress policy). */
  allowAddress?: (ip: string) => boolean;
  /** Jitter buffer depth, 40-60 ms is usual. Default 60. */
  jitterDepthMs?: number;
  rtcpIntervalMs?: number;
  /** 'timer' (default) emits 'audio' every 20 ms; 'manual' leaves reading to readFrame(). */
  playout?: 'timer' | 'manual';
  clock?: Clock;
  now?: () => number;
  cname?: string;
  log?: SipLogger;
  /** Emit 'inactive' when neither RTP nor RTCP arrived for this long (off when absent). */
  inactivityMs?: number;
}

/** Where and how to send: what SDP negotiation decided (NegotiatedMedia fits). */
export interface RtpRemote {
  remoteAddress: string | null;
  remotePort: number;
  remoteRtcpPort?: number;
  codec: CodecName;
  payloadType: number;
  dtmfPayloadType: number | null;
  /** Our direction: no sending when 'recvonly' or 'inactive' (on hold). */
  direction?: Direction;
  /**
   * Where the call's signalling came from (the INVITE's or the 2xx's source): media from it is
   * learned when the SDP's address cannot be the real one (latch.ts). Absent: the one given before.
   */
  signalAddress?: string | null;
}

export interface RtpStats {
  packetsSent: number;
  bytesSent: number;
  packetsReceived: number;
  bytesReceived: number;
  /** Packets of theirs we never received (RFC 3550 A.3). */
  packetsLost: number;
  /** Interarrival jitter we measure (RFC 3550 A.8), ms. */
  jitterMs: number;
  dropped: { refusedAddress: number; foreignSource: number; malformed: number; otherPayload: number };
  jitterBuffer: JitterStats;
  /** What the far end reports about our stream in RTCP; null until its first report. */
  remote: RemoteReport | null;
  rtcpSent: number;
  rtcpReceived: number;
}

export interface RtpSessionEvents {
  audio: [JitterFrame];
  dtmf: [{ digit: string; durationMs: number }];
  /** The far end sent RTCP BYE. */
  bye: [];
  /** Nothing arrived for `inactivityMs`: the far end is probably gone. Emitted once. */
  inactive: [];
}

const random32 = (): number => randomBytes(4).readUInt32BE(0);

export class RtpSession extends EventEmitter<RtpSessionEvents> {
  readonly ssrc = random32();
  readonly localPort: number;
  #remote: RtpRemote | null = null;
  #seq = random32() & 0xffff;
  #timestamp = random32();
  #first = true;
  #sentSinceReport = false;
  #closed = false;
  /** Closed, sending the last report and BYE. */
  #leaving = false;
  #recv = new ReceiveStats();
  #remoteSsrc: number | null = null;
  #signalAddress: string | null = null;
  readonly #sent = { packets: 0, bytes: 0 };
  readonly #received = { packets: 0, bytes: 0 };
  readonly #dropped = { refusedAddress: 0, foreignSource: 0, malformed: 0, otherPayload: 0 };
  readonly #jitter: JitterBuffer;
  readonly #dtmfIn = new DtmfReceiver();
  readonly #writer = new RtpWriter(this.ssrc);
  readonly #dtmfOut: DtmfSender;
  readonly #rtpLatch: Latch;
  readonly #rtcpLatch: Latch;
  readonly #playout: Pacer | null;
  readonly #reporter: RtcpReporter;
  readonly #now: () => number;
  #lastActivity = 0;
  #watchdog: NodeJS.Timeout | undefined;

  private constructor(private readonly lease: PortLease, private readonly options: RtpSessionOptions) {
    super();
    this.localPort = lease.port;
    this.#now = options.now ?? (() => performance.now());
    this.#jitter = new JitterBuffer({ depthMs: options.jitterDepthMs ?? 60, silence: SILENCE.PCMU });
    this.#rtpLatch = new Latch(this.#now);
    this.#rtcpLatch = new Latch(this.#now);
    this.#playout = options.playout === 'manual' ? null : new Pacer(FRAME_MS, () => this.#play(), this.#now);
    this.#reporter = new RtcpReporter({
      ssrc: this.ssrc,
      cname: options.cname ?? `parley-${this.ssrc.toString(16)}`,
      clock: options.clock ?? systemClock,
      now: this.#now,
      intervalMs: options.rtcpIntervalMs ?? 5000,
      send: (packet) => this.#sendRtcp(packet),
      senderInfo: () => {
        if (!this.#sentSinceReport) return null;
        this.#sentSinceReport = false;
        return { ntpTimestamp: ntpFromMs((options.clock ?? systemClock).now().getTime()), rtpTimestamp: this.#timestamp, packetCount: this.#sent.packets, octetCount: this.#sent.bytes };
      },
      block: () => this.#remoteSsrc === null ? null : {
        ssrc: this.#remoteSsrc,
        fractionLost: this.#recv.takeFractionLost(),
        packetsLost: this.#recv.lost,
        highestSequence: this.#recv.extendedHighest,
        jitter: this.#recv.jitter,
      },
    });
    this.#dtmfOut = new DtmfSender({
      now: this.#now,
      payloadType: () => this.#remote?.dtmfPayloadType ?? null,
      closed: () => this.#closed,
      timestamp: () => this.#timestamp,
      advanceTo: (ts) => {
        if (((ts - this.#timestamp) | 0) > 0) this.#timestamp = ts;
      },
      send: (pt, ts, marker, payload) => void this.#sendRtp(pt, ts, marker, payload, marker ? 'start' : 'continue'),
    }, FRAME_MS);
  }

  static async open(options: RtpSessionOptions): Promise<RtpSession> {
    // Datagrams can only arrive once the lease exists, and the session is built right after it.
    const opened: { session?: RtpSession } = {};
    const lease = await options.pool.allocate({
      packet: (datagram) => {
        if (opened.session) opened.session.#onDatagram(datagram);
      },
      error: (kind, message) => {
        if (opened.session) opened.session.#log.debug({ err: message }, `${kind}: socket error`);
      },
    });
    opened.session = new RtpSession(lease, options);
    return opened.session;
  }

  #onDatagram({ kind, data, address, port }: Datagram): void {
    if (kind === 'rtp') this.#onRtp(data, address, port);
    else this.#onRtcp(data, address, port);
  }

  get #log(): SipLogger {
    return this.options.log ?? silentLog;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** The RTP timestamp the next frame will carry (a pacer's reference). */
  get nextTimestamp(): number {
    return this.#timestamp >>> 0;
  }

  #allowed(ip: string): boolean {
    if (this.options.allowAddress?.(ip) === false) {
      this.#dropped.refusedAddress += 1;
      return false;
    }
    return true;
  }

  /** Sets (or, after a re-INVITE, changes) the far end; starts RTCP. */
  setRemote(remote: RtpRemote): void {
    this.#remote = remote;
    this.#jitter.setSilence(SILENCE[remote.codec]);
    if (remote.signalAddress !== undefined) this.#signalAddress = remote.signalAddress;
    const address = remote.remoteAddress;
    const sendable = address !== null && this.#allowed(address);
    const signal = this.#signalAddress !== null && this.options.allowAddress?.(this.#signalAddress) !== false ? this.#signalAddress : null;
    const expectation = { sendable, learnFrom: learningSource(address, signal, sendable) };
    this.#rtpLatch.expect(address === null ? null : { address, port: remote.remotePort }, expectation);
    this.#rtcpLatch.expect(address === null ? null : { address, port: remote.remoteRtcpPort ?? remote.remotePort + 1 }, expectation);
    if (!this.#closed) this.#reporter.start();
    this.#watch();
  }

  #watch(): void {
    const limit = this.options.inactivityMs;
    this.#lastActivity = this.#now();
    if (!limit || this.#watchdog || this.#closed) return;
    this.#watchdog = setInterval(() => {
      if (this.#now() - this.#lastActivity < limit) return;
      clearInterval(this.#watchdog);
      this.emit('inactive');
    }, Math.max(10, limit / 4));
  }

  /**
   * Sends one frame (20 ms of G.711: 160 bytes), 20 ms after the one before; `startsRun` (the
   * first frame of a talkspurt, marked as RFC 3551 says) goes out as soon as it can. False when
   * nothing went out (no remote, on hold, DTMF).
   */
  send(payload: Buffer, options: { startsRun?: boolean } = {}): boolean {
    const timestamp = this.#timestamp;
    this.#timestamp = (this.#timestamp + payload.length) >>> 0;
    const remote = this.#remote;
    if (this.#closed || !remote || this.#dtmfOut.active || remote.direction === 'recvonly' || remote.direction === 'inactive') return false;
    const startsRun = options.startsRun === true || this.#first;
    this.#first = false;
    return this.#sendRtp(remote.payloadType, timestamp, startsRun, payload, startsRun ? 'start' : 'continue');
  }

  /** Barge-in: frames handed over and not yet sent are dropped. */
  flush(): void {
    if (!this.#closed) this.lease.flush();
  }

  /** Resolves once every frame handed over so far has been sent. */
  drained(): Promise<void> {
    return this.lease.drained();
  }

  #sendRtp(payloadType: number, timestamp: number, marker: boolean, payload: Buffer, pacing: Pacing): boolean {
    const target = this.#rtpLatch.target;
    if (!target) return false;
    const packet = this.#writer.write(payloadType, this.#seq, timestamp, marker, payload);
    this.#seq = (this.#seq + 1) & 0xffff;
    this.#sent.packets += 1;
    this.#sent.bytes += payload.length;
    this.#sentSinceReport = true;
    this.lease.sendRtp(packet, target.port, target.address, pacing);
    return true;
  }

  /** One RFC 4733 key press (audio frames sent meanwhile are held back). Queued after earlier ones. */
  sendDtmf(digit: string, options: { durationMs?: number } = {}): Promise<void> {
    return this.#dtmfOut.send(digit, options.durationMs ?? 100);
  }

  /** Manual playout: the next 20 ms (null before playout starts). */
  readFrame(): JitterFrame | null {
    return this.#jitter.pop();
  }

  #play(): void {
    const frame = this.#jitter.pop();
    if (frame) this.emit('audio', frame);
  }

  #onRtp(buf: Buffer, address: string, port: number): void {
    if (this.#closed || !this.#allowed(address)) return;
    const remote = this.#remote;
    if (!remote || buf.length > MAX_RTP_BYTES) return;
    let packet;
    try {
      packet = parseRtp(buf);
    } catch {
      this.#dropped.malformed += 1;
      return;
    }
    // Checked before the latch, so that only a packet of the negotiated stream can latch.
    const isDtmf = packet.payloadType === remote.dtmfPayloadType;
    if (!isDtmf && packet.payloadType !== remote.payloadType) {
      this.#dropped.otherPayload += 1;
      return;
    }
    if (!this.#rtpLatch.accept(address, port)) {
      this.#dropped.foreignSource += 1;
      return;
    }
    this.#lastActivity = this.#now();
    if (packet.ssrc !== this.#remoteSsrc) {
      this.#remoteSsrc = packet.ssrc;
      this.#recv = new ReceiveStats();
    }
    this.#received.packets += 1;
    this.#received.bytes += packet.payload.length;
    // Loss and jitter are per source: telephone-events share the audio's sequence numbers.
    if (!this.#recv.update(packet.sequenceNumber, packet.timestamp, this.#now(), !isDtmf)) return;
    if (isDtmf) {
      try {
        const digit = this.#dtmfIn.push(packet.timestamp, packet.payload);
        if (digit) this.emit('dtmf', digit);
      } catch {
        this.#dropped.malformed += 1;
      }
      return;
    }
    this.#jitter.push(packet.timestamp, packet.payload);
    if (this.#playout && !this.#playout.running) this.#playout.start();
  }

  #onRtcp(buf: Buffer, address: string, port: number): void {
    if (this.#closed || !this.#allowed(address)) return;
    // Read before the latch, so that only RTCP can latch; what it says is kept only from the latched source.
    let parsed;
    try {
      parsed = parseRtcp(buf);
    } catch {
      this.#dropped.malformed += 1;
      return;
    }
    if (!this.#rtcpLatch.accept(address, port)) {
      this.#dropped.foreignSource += 1;
      return;
    }
    this.#reporter.take(parsed);
    this.#lastActivity = this.#now();
    if (this.#remoteSsrc !== null && parsed.byes.includes(this.#remoteSsrc)) this.emit('bye');
  }

  #sendRtcp(packet: Buffer, sent?: () => void): void {
    const target = this.#rtcpLatch.target;
    if (target && (!this.#closed || this.#leaving)) this.lease.sendRtcp(packet, target.port, target.address, sent);
    else sent?.();
  }

  stats(): RtpStats {
    return {
      packetsSent: this.#sent.packets,
      bytesSent: this.#sent.bytes,
      packetsReceived: this.#received.packets,
      bytesReceived: this.#received.bytes,
      packetsLost: Math.max(0, this.#recv.lost),
      jitterMs: this.#recv.jitterMs,
      dropped: { ...this.#dropped },
      jitterBuffer: { ...this.#jitter.stats },
      remote: this.#reporter.remote,
      rtcpSent: this.#reporter.sent,
      rtcpReceived: this.#reporter.received,
    };
  }

  /** Stops; the frames handed over, a last report and RTCP BYE go out, then the ports are given back. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#reporter.stop();
    this.#playout?.stop();
    clearInterval(this.#watchdog);
    // Frames handed over still go out (a call's last words), then the last report and the BYE;
    // the sockets close once those have left.
    void this.lease.drained().then(() => {
      if (this.#remote) {
        this.#leaving = true;
        // One compound packet, the BYE after the report (RFC 3550 §6.1).
        this.#reporter.sendNow({ bye: true });
      }
      this.lease.release();
    });
  }
}
