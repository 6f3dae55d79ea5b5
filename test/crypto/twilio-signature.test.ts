import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkTwilioSignature, signedUrlSpellings, twilioSignature } from '../../src/crypto/twilio-signature.ts';

// The worked example Twilio publishes for request validation (auth token 12345), and the
// vectors its own validators are tested with (a repeated parameter, a mixed-case host).
const TOKEN = '12345';
const URL = 'https://mycompany.com/myapp.php?foo=1&bar=2';
const PARAMS = { CallSid: 'CA1234567890ABCDE', Caller: '+14158675309', Digits: '1234', From: '+14158675309', To: '+18005551212' };

describe('X-Twilio-Signature', () => {
  it('matches Twilio\'s published example', () => {
    assert.equal(twilioSignature(TOKEN, URL, PARAMS), 'RSOYDt4T1cUTdK1PDd93/VVr8B8=');
    assert.equal(checkTwilioSignature(TOKEN, 'RSOYDt4T1cUTdK1PDd93/VVr8B8=', URL, PARAMS), true);
  });

  it('counts a repeated parameter once per distinct value, sorted', () => {
    const params = { Sid: 'CA123', SidAccount: 'AC123', Digits: ['5678', '1234', '1234'] };
    assert.equal(checkTwilioSignature(TOKEN, 'IK+Dwps556ElfBT0I3Rgjkr1wJU=', URL, params), true);
  });

  it('signs the URL as written: a mixed-case host is its own signature', () => {
    assert.equal(checkTwilioSignature(TOKEN, 'g9IN/x4Cft2g517EjYvEvM/W7LU=', 'https://MyCompany.com/myapp.php?foo=1&bar=2', PARAMS), true);
  });

  it('accepts the default port written out or left out, and nothing else', () => {
    assert.deepEqual(signedUrlSpellings('https://a.example/x?y=1'), ['https://a.example/x?y=1', 'https://a.example:443/x?y=1']);
    assert.deepEqual(signedUrlSpellings('https://a.example:443/x'), ['https://a.example/x', 'https://a.example:443/x']);
    assert.deepEqual(signedUrlSpellings('http://a.example:8080/x'), ['http://a.example:8080/x']);
    const withPort = twilioSignature(TOKEN, 'https://mycompany.com:443/myapp.php?foo=1&bar=2', PARAMS);
    assert.equal(checkTwilioSignature(TOKEN, withPort, URL, PARAMS), true);
  });

  it('refuses any change: token, URL, a value, a missing or malformed header', () => {
    const good = 'RSOYDt4T1cUTdK1PDd93/VVr8B8=';
    assert.equal(checkTwilioSignature('54321', good, URL, PARAMS), false);
    assert.equal(checkTwilioSignature(TOKEN, good, `${URL}&baz=3`, PARAMS), false);
    assert.equal(checkTwilioSignature(TOKEN, good, 'http://mycompany.com/myapp.php?foo=1&bar=2', PARAMS), false);
    assert.equal(checkTwilioSignature(TOKEN, good, URL, { ...PARAMS, Digits: '9999' }), false);
    assert.equal(checkTwilioSignature(TOKEN, good, URL, { ...PARAMS, Extra: '' }), false);
    assert.equal(checkTwilioSignature(TOKEN, undefined, URL, PARAMS), false);
    assert.equal(checkTwilioSignature(TOKEN, '', URL, PARAMS), false);
    assert.equal(checkTwilioSignature(TOKEN, 'RSOYDt4T1cUTdK1PDd93/VVr8B8', URL, PARAMS), false);
  });
});
