// Cancelling a task while its call rings: the dialer's INVITE goes through Kamailio to a bare
// UDP phone registered there, which rings (180) and never answers. The API's cancel must reach
// the phone as a CANCEL relayed by Kamailio, no call may be answered or recorded, and the task
// ends CANCELLED. SQLite only: the cancel's bookkeeping is tested on both dialects elsewhere.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startKamailio, type Kamailio } from '../helpers/kamailio.ts';
import { isRequest, isResponse, rawPeer, reply, request, type RawPeer } from '../helpers/raw-sip-peer.ts';
import { startWorld, type World } from '../calls/support/world.ts';
import type { SipRequest } from '../../src/sip/message.ts';

const AGENT_NUMBER = '+12125550011';
const PHONE = '+12125550111';

describe('cancelling a task while its call rings (sqlite)', () => {
  let w: World;
  let k: Kamailio;
  let phone: RawPeer;

  before(async () => {
    k = await startKamailio({ template: 'proxy', authFrom: '^[+]1212555001' });
    phone = await rawPeer();
    // The phone registers at Kamailio (no challenge for phones), so INVITEs to its number reach it.
    phone.send(request('REGISTER', `sip:127.0.0.1:${k.udpPort}`, phone.port, {
      From: `<sip:${PHONE}@127.0.0.1:${k.udpPort}>;tag=reg1`, To: `<sip:${PHONE}@127.0.0.1:${k.udpPort}>`,
      'Call-ID': `reg-${Date.now()}@phone`, CSeq: '1 REGISTER', Contact: `<sip:${PHONE}@127.0.0.1:${phone.port}>`, Expires: '600', 'Content-Length': '0',
    }), k.udpPort);
    await phone.waitFor(isResponse(200, 'REGISTER'));
    w = await startWorld('sqlite', { PARLEY_DIALER: 'sip', PARLEY_SIP_PORT: '0', PARLEY_RTP_PORTS: '23000-23019', PARLEY_RING_SECONDS: '30' });
  });
  after(async () => {
    await w?.close();
    await phone?.close();
    await k?.stop();
  });

  it('sends CANCEL through Kamailio, answers no call, and the task ends CANCELLED', { timeout: 30_000 }, async () => {
    const cred = await w.api('POST', `${w.tenant.orgPath}/sip/credentials`, { name: 'trunk', hostname: '127.0.0.1', port: k.udpPort, username: k.username, password: k.password });
    assert.equal(cred.status, 201, JSON.stringify(cred.body));
    const number = await w.api('POST', `${w.tenant.orgPath}/sip/numbers`, { number: AGENT_NUMBER, sipCredentialId: cred.body.data.id });
    assert.equal(number.status, 201, JSON.stringify(number.body));
    const agentId = await w.createAssistant({ name: 'Agent', telephoneNumberId: number.body.data.id }, 'agents');
    const created = await w.api('POST', `${w.tenant.orgPath}/agents/${agentId}/tasks`, { targetNumber: PHONE, execute: true });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const taskId: string = created.body.data.id;
    const path = `${w.tenant.orgPath}/agents/${agentId}/tasks/${taskId}`;

    // The phone rings: 100 and 180, never a final answer until the CANCEL.
    phone.onMessage = ({ msg, from }) => {
      if (msg.kind !== 'request') return;
      if (msg.method === 'INVITE') {
        phone.send(reply(msg, 180, 'Ringing', { toTag: 'ring1' }), from.port, from.address);
      } else if (msg.method === 'CANCEL') {
        phone.send(reply(msg, 200, 'OK', { toTag: 'ring1' }), from.port, from.address);
        const invite = phone.received.find((r) => isRequest('INVITE')(r.msg))!.msg as SipRequest;
        phone.send(reply(invite, 487, 'Request Terminated', { toTag: 'ring1' }), from.port, from.address);
      }
    };
    // The runner starts the call (tick does not wait for it to end); the INVITE reaches the phone.
    const ringing = phone.waitFor(isRequest('INVITE'), 1, 20_000);
    await w.t.app.runner.tick();
    const [invite] = await ringing;
    assert.equal(invite!.from.port, k.udpPort, 'the INVITE came through Kamailio');
    assert.equal((await w.api('GET', path)).body.data.status, 'IN_PROGRESS');

    const cancelled = await w.api('POST', `${path}/cancel`);
    assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
    const [cancel] = await phone.waitFor(isRequest('CANCEL'), 1, 10_000);
    assert.equal(cancel!.from.port, k.udpPort, 'Kamailio relayed the CANCEL');
    assert.equal(cancel!.msg.headers.get('Call-ID'), invite!.msg.headers.get('Call-ID'));
    // Kamailio acknowledges our 487 itself (hop by hop); the runner's job ends without recording anything over the cancel.
    await phone.waitFor(isRequest('ACK'), 1, 10_000);
    await w.t.app.runner.idle();

    const task = (await w.api('GET', path)).body.data;
    assert.equal(task.status, 'CANCELLED', JSON.stringify(task));
    const calls = await w.t.ctx.db.kysely.selectFrom('calls').select('id').where('task_id', '=', taskId).execute();
    assert.deepEqual(calls, [], 'no call was answered or recorded');
    const attempts = await w.t.ctx.db.kysely.selectFrom('agent_task_attempts').selectAll().where('task_id', '=', taskId).execute();
    assert.deepEqual(attempts.map((a) => a.outcome), ['cancelled']);
    assert.equal(phone.received.filter((r) => isRequest('BYE')(r.msg)).length, 0, 'no BYE: nothing was answered');
  });
});
