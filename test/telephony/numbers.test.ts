/**
 * Issue 25: the called number's bare digits were read as international E.164 and the calling
 * number's kept as sent. Both are read one way now; what the trunk sent is kept beside the
 * calling number on the record, and tool webhooks still get exactly interface.md's transport.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { callToolWebhook } from '../../src/calls/tool-call.ts';
import { sipTransportInfo } from '../../src/calls/transports/transport.ts';
import { numbersOf } from '../../src/telephony/inbound-route.ts';
import { callingNumber, dialledNumber } from '../../src/telephony/numbers.ts';

describe('the called and the calling number are read the same way', () => {
  it('bare international digits, %2B, a SIP or tel URI: the same E.164 number on both sides', () => {
    for (const [sent, e164] of <[string, string][]>[
      ['49176918682', '+49176918682'], ['4930123456', '+4930123456'], ['%2B4930123456', '+4930123456'],
      ['+4930123456', '+4930123456'], ['sip:+4930123456@trunk.example', '+4930123456'], ['tel:+14155550100', '+14155550100'],
    ]) {
      assert.deepEqual(numbersOf(sent.replace(/^(sip|tel):([^@]+).*$/, '$2')), [e164], `called ${sent}`);
      assert.equal(dialledNumber(sent), e164, `dialled ${sent}`);
      assert.equal(callingNumber(sent)?.number, e164, `calling ${sent}`);
    }
  });

  it('keeps what was sent beside the reading, only when they differ', () => {
    assert.deepEqual(callingNumber('49176918682'), { number: '+49176918682', raw: '49176918682' });
    assert.deepEqual(callingNumber('+49176918682'), { number: '+49176918682' });
    // Not a number: kept as sent, as before (Twilio's client: callers, account names, national numbers).
    for (const sent of ['client:alice', 'alice', '017612345678', '112']) {
      assert.deepEqual(callingNumber(sent), { number: sent }, sent);
      assert.deepEqual(numbersOf(sent), [], sent);
    }
    for (const withheld of ['anonymous', 'Restricted', '+266696687', '', undefined]) assert.equal(callingNumber(withheld), null, String(withheld));
  });

  it('the record keeps callingNumberRaw; the tool webhook body has exactly interface.md\'s three fields', async () => {
    const caller = callingNumber('49176918682');
    const transport = sipTransportInfo('+4930123456', caller?.number, caller?.raw);
    assert.deepEqual(transport, { type: 'sip', calledNumber: '+4930123456', callingNumber: '+49176918682', callingNumberRaw: '49176918682' });
    const bodies: string[] = [];
    const tool = { name: 'lookup', serverUrl: 'https://tools.example/lookup', spec: { name: 'lookup', parameters: { type: 'object' } }, headers: {}, timeoutMs: 1_000, signingSecret: null };
    const result = await callToolWebhook(async (request) => {
      bodies.push(String(request.body));
      return { status: 200, headers: {}, body: 'ok', latencyMs: 1 };
    }, tool, { id: 'c1', name: 'lookup', arguments: '{}' }, { callId: 'call-1', traceId: 'trace', transport, clock: new ManualClock('2026-11-18T10:00:00Z'), signal: new AbortController().signal });
    assert.equal(result.outcome, 'ok');
    assert.deepEqual(JSON.parse(bodies[0]!).transport, { type: 'sip', calledNumber: '+4930123456', callingNumber: '+49176918682' });
  });
});
