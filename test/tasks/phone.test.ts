import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeE164 } from '../../src/modules/tasks/phone.ts';

describe('normalizeE164', () => {
  const accepted: [string, string][] = [
    ['+4930123456', '+4930123456'],
    ['+49 30 123456', '+4930123456'],
    ['+1 (212) 555-0100', '+12125550100'],
    ['+1.212.555.0100', '+12125550100'],
    ['+44-20-7946-0958', '+442079460958'],
    ['  +33 1 23 45 67 89  ', '+33123456789'],
    ['+49\t30\u00a0123456', '+4930123456'],
    ['+1234567', '+1234567'], // 7 digits: the shortest allowed
    ['+123456789012345', '+123456789012345'], // 15 digits: the longest allowed
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
    ['+123456', 'only 6 digits'],
    ['+1234567890123456', '16 digits'],
    ['+44 (0)20 7946 0958', 'trunk prefix notation is ambiguous'],
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
