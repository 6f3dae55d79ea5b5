// The SIP transport's transfer, on stand-ins for the dialog and the RTP session: which REFER
// answers count as done, which fall back to the bridge, and what the transport stops doing once
// the caller is bridged. The real REFER and bridge through Kamailio are in
// test/telephony/dialer-transfer.test.ts; these are the cases a phone cannot be made to play.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import { sipTransport, type TransferResult } from '../../src/calls/transports/sip.ts';
import { sipTransportInfo } from '../../src/calls/transports/transport.ts';
import type { Dialog } from '../../src/sip/dialog.ts';
import type { ReferProgress, ReferResult } from '../../src/sip/refer.ts';
import type { RtpSession } from '../../src/sip/rtp/session.ts';
import { until } from '../helpers/until.ts';

function standIns(refer: () => ReferResult) {
  const dialog = Object.assign(new EventEmitter(), {
    byes: 0,
    refers: [] as string[],
    ended: new Promise<never>(() => undefined),
    refer(target: string) {
      dialog.refers.push(target);
      return Promise.resolve(refer());
    },
    bye() {
      dialog.byes += 1;
      return Promise.resolve();
    },
  });
  const rtp = Object.assign(new EventEmitter(), {
    sent: 0,
    flushed: 0,
    send() {
      rtp.sent += 1;
      return true;
    },
    flush() {
      rtp.flushed += 1;
    },
    drained: () => Promise.resolve(),
  });
  return { dialog, rtp };
}

const REASONS: Record<number, string> = { 202: 'Accepted', 501: 'Not Implemented', 603: 'Decline' };
const answer = (status: number, outcome: ReferProgress | null = null): ReferResult => ({
  status, reason: REASONS[status] ?? '', accepted: status === 202, outcome: Promise.resolve(outcome),
});

function transportOf(s: ReturnType<typeof standIns>, bridge?: (destination: string) => Promise<TransferResult>) {
  const bridged: string[] = [];
  const { transport, link } = sipTransport(s.dialog as unknown as Dialog, s.rtp as unknown as RtpSession, sipTransportInfo('+12125550101', '+12125550001'), 'PCMU', {
    ended: () => undefined,
    dtmf: () => undefined,
    ...(bridge ? { bridge: (d: string) => (bridged.push(d), bridge(d)) } : {}),
  });
  return { transport, link, bridged };
}

describe('the SIP transport transfers', () => {
  it('by REFER: a 202 and a final NOTIFY of 200 are a transfer done, without the bridge', async () => {
    const s = standIns(() => answer(202, { status: 200, reason: 'OK', final: true }));
    const t = transportOf(s, async () => ({ ok: true }));
    assert.deepEqual(await t.transport.control!.transfer('+4930123456'), { ok: true });
    assert.deepEqual(s.dialog.refers, ['tel:+4930123456']);
    assert.deepEqual(t.bridged, []);
    t.transport.close();
    await until('we leave the call with BYE', () => s.dialog.byes, (n) => n === 1, 2000, 5);
  });

  it('a REFER refused (501) falls back to the bridge; once bridged, our voice and our BYE stay out of the call', async () => {
    const s = standIns(() => answer(501));
    const t = transportOf(s, async () => ({ ok: true }));
    assert.deepEqual(await t.transport.control!.transfer('sip:desk@pbx.example.com'), { ok: true });
    assert.deepEqual(t.bridged, ['sip:desk@pbx.example.com']);
    t.link.sendFrame(Buffer.alloc(160, 0xff));
    assert.equal(s.rtp.sent, 0, 'the voice pipeline no longer reaches the caller');
    assert.equal(s.rtp.flushed, 1, 'and what it had handed over is dropped');
    t.transport.close();
    await new Promise(setImmediate); // past the drain, which these stand-ins answer at once
    assert.equal(s.dialog.byes, 0, 'the bridge owns the call now');
  });

  it('a NOTIFY reporting failure falls back too; when the bridged call fails as well, both reasons are told', async () => {
    const s = standIns(() => answer(202, { status: 486, reason: 'Busy Here', final: true }));
    const t = transportOf(s, async () => ({ ok: false, reason: 'SIP 480 Temporarily Unavailable' }));
    const result = await t.transport.control!.transfer('+4930123456');
    assert.deepEqual(result, { ok: false, reason: 'the trunk refused the transfer (the new call got SIP 486 Busy Here) and calling +4930123456 failed (SIP 480 Temporarily Unavailable)' });
    t.link.sendFrame(Buffer.alloc(160, 0xff));
    assert.equal(s.rtp.sent, 1, 'the call goes on with our voice');
    t.transport.close();
    await until('the BYE', () => s.dialog.byes, (n) => n === 1, 2000, 5);
  });

  it('without a bridge (a call that was not placed by the dialer) a refusal is the answer', async () => {
    const s = standIns(() => answer(603));
    const t = transportOf(s);
    assert.deepEqual(await t.transport.control!.transfer('+4930123456'), { ok: false, reason: 'the trunk refused the transfer (SIP 603 Decline)' });
  });

  it('a REFER accepted with no NOTIFY at all counts as done', async () => {
    const s = standIns(() => answer(202, null));
    const t = transportOf(s, async () => assert.fail('no bridge for an accepted REFER'));
    assert.deepEqual(await t.transport.control!.transfer('+4930123456'), { ok: true });
  });
});
