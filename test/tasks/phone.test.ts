import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkNumber, normalizeE164 } from '../../src/telephony/phone.ts';

describe('normalizeE164', () => {
  const accepted: [string, string][] = [
    ['+4930123456', '+4930123456'],
    ['+49 30 123456', '+4930123456'],
    ['+1 (212) 555-0100', '+12125550100'],
    ['+1.212.555.0100', '+12125550100'],
    ['+44-20-7946-0958', '+442079460958'],
    ['  +33 1 23 45 67 89  ', '+33123456789'],
    ['+49\t30\u00a0123456', '+4930123456'],
    // The "(0)" trunk prefix: the UK drops the 0 in international form, Italy keeps it.
    ['+44 (0)20 7946 0958', '+442079460958'],
    ['+49 (0)30 123456', '+4930123456'],
    ['+39 (0)6 1234 5678', '+390612345678'],
  ];
  for (const [input, expected] of accepted) {
    it(`accepts ${JSON.stringify(input)}`, () => {
      assert.equal(normalizeE164(input), expected);
    });
  }

  const refused: [string, string][] = [
    ['', 'empty'],
    ['+', 'plus only'],
    ['4930123456', 'no plus, no country code to assume'],
    ['004930123456', '00 international prefix is ambiguous'],
    ['0049 30 123456', '00 international prefix with spaces'],
    ['030 123456', 'national number'],
    ['+0930123456', 'country code cannot start with 0'],
    ['+123456', 'too short for any country'],
    ['+1234567', 'too short for +1'],
    ['+1234567890123456', '16 digits'],
    ['++4930123456', 'double plus'],
    ['49+30123456', 'plus not at the start'],
    ['+49 30 123456 ext 12', 'extension'],
    ['+49/30/123456', 'slash is not a stripped separator'],
    ['+1-800-FLOWERS', 'letters'],
    ['+４９３０１２３４５６', 'full-width digits'],
    ['+٤٩٣٠١٢٣٤٥٦', 'Arabic-Indic digits'],
  ];
  for (const [input, why] of refused) {
    it(`refuses ${JSON.stringify(input)} (${why})`, () => {
      assert.equal(normalizeE164(input), null);
    });
  }
});

describe('checkNumber', () => {
  it('refuses premium-rate and shared-cost numbers for dialling, and says why', () => {
    assert.match(checkNumber('+1 900 555 0100', 'dial').problem ?? '', /premium-rate/);
    assert.match(checkNumber('+44 871 234 5678', 'dial').problem ?? '', /premium-rate/);
    assert.match(checkNumber('+49 180 1234567', 'dial').problem ?? '', /shared-cost/);
  });

  it('takes the same numbers as our own numbers: a SIP number may be of any valid type', () => {
    assert.deepEqual(checkNumber('+1 900 555 0100', 'own'), { number: '+19005550100' });
    assert.deepEqual(checkNumber('+49 180 1234567', 'own'), { number: '+491801234567' });
  });

  it('names the country code of a number of the wrong length', () => {
    assert.equal(checkNumber('+1234567', 'dial').problem, 'is not a possible number: wrong length for country code +1');
    assert.equal(checkNumber('+1234567', 'own').problem, 'is not a possible number: wrong length for country code +1');
  });

  it('lets a possible number through for dialling, but wants a valid one as an own number', () => {
    // +49 900 with a length the German plan allows but no pattern it knows.
    assert.deepEqual(checkNumber('+49 900 12345678', 'dial'), { number: '+4990012345678' });
    assert.match(checkNumber('+49 900 12345678', 'own').problem ?? '', /not a valid number .* \+49/);
  });

  it('explains the expected format when the text is not an international number', () => {
    assert.match(checkNumber('030 123456', 'dial').problem ?? '', /international format .* such as \+4930123456/);
  });

  it('dials ordinary fixed and mobile numbers in E.164', () => {
    assert.deepEqual(checkNumber('+44 (0)20 7946 0958', 'dial'), { number: '+442079460958' });
    assert.deepEqual(checkNumber('+1 (415) 555-0100', 'dial'), { number: '+14155550100' });
  });
});
