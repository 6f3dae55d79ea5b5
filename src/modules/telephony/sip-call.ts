import type { Selectable } from 'kysely';
import type { CallSetup, Log } from '../../calls/record.ts';
import { sipTransport } from '../../calls/transports/sip.ts';
import type { TransportInfo } from '../../calls/transports/transport.ts';
import { readJson } from '../../db/values.ts';
import { bindMedia } from '../../sip/call-media.ts';
import type { Dialog } from '../../sip/dialog.ts';
import type { RtpSession, RtpStats } from '../../sip/rtp/session.ts';
import type { CodecName } from '../../sip/sdp.ts';
import { newSession, prepareCall, startSession, type CallRunDeps } from '../calls/call-run.ts';
import type { CallTable } from '../calls/calls.table.ts';

/** A SIP call's media as its record keeps it: our counts, and what the far end reported in RTCP. */
export interface CallMedia {
  packetsSent: number;
  packetsReceived: number;
  /** Packets of the far end's that never reached us. */
  packetsLost: number;
  /** Interarrival jitter of what we received, ms. */
  jitterMs: number;
  /** The far end's last RTCP report on our stream; null when none came. */
  remote: { packetsLost: number; fractionLost: number; jitterMs: number; rttMs: number | null } | null;
}

export function callMediaOf(stats: RtpStats): CallMedia {
  const { remote } = stats;
  return {
    packetsSent: stats.packetsSent,
    packetsReceived: stats.packetsReceived,
    packetsLost: stats.packetsLost,
    jitterMs: Math.round(stats.jitterMs * 100) / 100,
    remote: remote ? { packetsLost: remote.packetsLost, fractionLost: remote.fractionLost, jitterMs: Math.round(remote.jitterMs * 100) / 100, rttMs: remote.rttMs } : null,
  };
}

export interface ConnectedSipCall {
  /** The call record, just made active. */
  row: Selectable<CallTable>;
  dialog: Dialog;
  rtp: RtpSession;
  codec: CodecName;
  log: Log;
  /** Aborted when the call must end from our side (its task cancelled, its lease lost). */
  signal?: AbortSignal;
  /**
   * The call's setup when it was prepared before the answer (an incoming call, prepared while it
   * rang): the session then starts with the dialog, so no early key or word is missed.
   */
  setup?: CallSetup;
}

/**
 * Runs an answered SIP call (placed by the dialer or taken in) to its end: the session with the
 * voice pipeline over RTP, the far end's BYE ending it, our BYE when the session ends first.
 * Keeps the media statistics on the record; answers the conclusion's id (null when the call
 * could not be prepared and was ended as failed).
 */
export async function runSipCall(run: CallRunDeps, call: ConnectedSipCall): Promise<{ conclusionId: string | null }> {
  const { row, dialog, rtp } = call;
  const { kysely } = run.deps.ctx.db;
  bindMedia(dialog, rtp);
  try {
    const setup = call.setup ?? await prepareCall(run, row).catch(() => null);
    if (!setup) {
      await dialog.bye().catch(() => undefined);
    } else {
      const session = newSession(run, setup, call.log);
      const { transport, link } = sipTransport(dialog, rtp, readJson<TransportInfo>(row.transport), call.codec, {
        ended: (end) => void session.end(end.by === 'remote' ? 'client_ended' : 'client_disconnected'),
        dtmf: (digit) => session.dtmf(digit),
      });
      startSession(run, session, setup, transport, link, call.log);
      call.signal?.addEventListener('abort', () => void session.end('server_lost'), { once: true });
      if (call.signal?.aborted) void session.end('server_lost');
      await session.done;
    }
  } finally {
    rtp.close();
    await kysely.updateTable('calls').set({ media: JSON.stringify(callMediaOf(rtp.stats())) }).where('id', '=', row.id).execute();
  }
  const ended = await kysely.selectFrom('calls').select('conclusion_id').where('id', '=', row.id).executeTakeFirst();
  return { conclusionId: ended?.conclusion_id ?? null };
}
