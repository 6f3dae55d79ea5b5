import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { ManualClock } from '../../src/clock.ts';
import { sign, signingKey } from '../../src/crypto/webhook-signing.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { EGRESS_ENV, WHSEC, drain, enqueue, putHooks, signedWith, sourceWithHooks, startReceiver } from './support.ts';

describe('Standard Webhooks signing', () => {
  it('matches the official library for a whsec_ secret (base64 key) and a plain one (UTF-8 bytes)', () => {
    const body = JSON.stringify({ type: 'call_ended', timestamp: '2026-11-22T05:30:05.972Z', data: { callId: 'c-1' } });
    const at = new Date('2026-11-22T05:30:06Z');
    assert.equal(sign(WHSEC, 'msg_1', at.getTime() / 1000, body), new Webhook(WHSEC).sign('msg_1', at, body));
    const plain = 'pässwörd with spaces';
    assert.equal(sign(plain, 'msg_1', at.getTime() / 1000, body), new Webhook(Buffer.from(plain, 'utf8'), { format: 'raw' }).sign('msg_1', at, body));
    assert.deepEqual(signingKey(WHSEC), Buffer.from('a test signing key of 32 bytes!!'));
  });
});

for (const dialect of DIALECTS) {
  describe(`event hook requests are signed (${dialect})`, () => {
    let t: TestApp;
    let a: Tenant;
    let clock: ManualClock;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    before(async () => {
      // Real time, so that the official verifier's five-minute tolerance holds; moved by hand below.
      clock = new ManualClock(new Date());
      t = await buildTestApp(dialect, EGRESS_ENV, { clock });
      a = await createTenant(t);
      receiver = await startReceiver();
    });
    after(async () => {
      await receiver.close();
      await t.close();
    });

    const event = (sourceId: string, payload: Record<string, unknown>) =>
      ({ organizationId: a.organizationId, sourceKind: 'assistant', sourceId, type: 'call_ended', payload }) as const;

    it('verify() of the standardwebhooks package accepts both a whsec_ and a plain secret; body and headers as documented', async () => {
      const plain = 'plain-secret-🔑';
      const source = await sourceWithHooks(t, a, [
        { type: 'call_ended', url: `${receiver.url}/whsec`, secret: WHSEC },
        { type: 'call_ended', url: `${receiver.url}/plain`, secret: plain },
        { type: 'transcript_ready', url: `${receiver.url}/other`, secret: WHSEC },
      ]);
      const sent = receiver.received.length;
      await enqueue(t, event(source.id, { callId: 'call-1', durationSeconds: 42 }), clock.now());
      assert.equal(await drain(t), 2, 'one delivery per hook of the event type');
      const got = receiver.received.slice(sent);
      const byPath = new Map(got.map((r) => [r.path, r]));
      assert.deepEqual([...byPath.keys()].sort(), ['/plain', '/whsec']);
      const whsec = byPath.get('/whsec');
      const raw = byPath.get('/plain');
      assert.ok(whsec && raw);
      assert.deepEqual(new Webhook(WHSEC).verify(whsec.body, whsec.headers as Record<string, string>), {
        type: 'call_ended', timestamp: clock.now().toISOString(), data: { callId: 'call-1', durationSeconds: 42 },
      });
      assert.ok(new Webhook(Buffer.from(plain, 'utf8'), { format: 'raw' }).verify(raw.body, raw.headers as Record<string, string>));
      assert.throws(() => new Webhook(WHSEC).verify(raw.body, raw.headers as Record<string, string>), /No matching signature/);
      assert.throws(() => new Webhook(WHSEC).verify(`${whsec.body} `, whsec.headers as Record<string, string>), /No matching signature/, 'the body is signed');
      assert.match(String(whsec.headers['webhook-id']), /^msg_[\da-f-]{36}$/);
      assert.notEqual(whsec.headers['webhook-id'], raw.headers['webhook-id'], 'one webhook-id per delivery');
      assert.equal(whsec.headers['webhook-timestamp'], String(Math.floor(clock.now().getTime() / 1000)));
      assert.equal(whsec.headers['content-type'], 'application/json');
      assert.equal(whsec.headers['x-request-id'], `${String(whsec.headers['webhook-id'])}.1`);
      assert.equal(String(whsec.headers['webhook-signature']).split(' ').length, 1);
    });

    it('for 24 hours after a rotation both the new and the previous secret sign; then only the new one', async () => {
      const oldSecret = WHSEC;
      const newSecret = `whsec_${Buffer.from('the rotated signing key, 32 byte').toString('base64')}`;
      const source = await sourceWithHooks(t, a, [{ type: 'call_ended', url: `${receiver.url}/rotating`, secret: oldSecret }]);
      await putHooks(t, source.url, [{ id: source.hookIds[0], type: 'call_ended', url: `${receiver.url}/rotating`, secret: newSecret }]);

      let sent = receiver.received.length;
      await enqueue(t, event(source.id, { callId: 'during-overlap' }), clock.now());
      await drain(t);
      const during = receiver.received.slice(sent);
      assert.equal(during.length, 1);
      const [r] = during;
      assert.ok(r);
      assert.equal(String(r.headers['webhook-signature']).split(' ').length, 2, 'two v1 signatures, space-separated');
      for (const secret of [newSecret, oldSecret]) assert.ok(new Webhook(secret).verify(r.body, r.headers as Record<string, string>));
      const stranger = `whsec_${Buffer.from('somebody else entirely, 32 bytes').toString('base64')}`;
      assert.throws(() => new Webhook(stranger).verify(r.body, r.headers as Record<string, string>), /No matching signature/);

      clock.advance(25 * 60 * 60_000);
      sent = receiver.received.length;
      await enqueue(t, event(source.id, { callId: 'after-overlap' }), clock.now());
      await drain(t);
      const [later] = receiver.received.slice(sent);
      assert.ok(later);
      assert.equal(String(later.headers['webhook-signature']).split(' ').length, 1);
      assert.ok(signedWith(newSecret, later));
      assert.ok(!signedWith(oldSecret, later), 'the previous secret no longer signs');
    });
  });
}
