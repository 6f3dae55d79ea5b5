import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { numbersOf } from '../../src/telephony/inbound-route.ts';

describe('the numbers an INVITE user part may name', () => {
  it('reads E.164 with the plus, escaped or not, and bare international digits', () => {
    assert.deepEqual(numbersOf('+4930123456'), ['+4930123456']);
    assert.deepEqual(numbersOf('%2B4930123456'), ['+4930123456']);
    assert.deepEqual(numbersOf('4930123456'), ['+4930123456']);
    assert.deepEqual(numbersOf('+1 212-555-0100'), ['+12125550100']);
  });

  it('names no number for an account name, a short code, an empty user or none', () => {
    for (const user of ['alice', 'parley', '112', '', null]) assert.deepEqual(numbersOf(user), [], String(user));
  });
});
