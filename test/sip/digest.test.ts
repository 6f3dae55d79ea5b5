import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { buildDigestAuthorization, chooseDigestChallenge, parseAuthChallenges, parseDigestChallenges } from '../../src/sip/digest.ts';
import type { DigestChallenge } from '../../src/sip/digest.ts';
import { SipParseError } from '../../src/sip/message.ts';

const md5 = (s: string): string => createHash('md5').update(s).digest('hex');
/** Reads one parameter back out of a built Authorization value. */
const param = (auth: string, name: string): string | undefined => parseAuthChallenges(auth)[0]?.params.get(name);
const only = (value: string | string[]): DigestChallenge => {
  const c = chooseDigestChallenge(parseDigestChallenges(value));
  assert.ok(c, 'a usable challenge');
  return c;
};

describe('digest challenge parsing', () => {
  it('parses quoted and unquoted parameters, case-insensitively', () => {
    const [c] = parseAuthChallenges('DIGEST Realm="a \\"quoted\\" realm, with comma", NONCE=abc123, algorithm=md5-SESS, qop="auth,auth-int", stale=TRUE');
    assert.equal(c?.scheme, 'DIGEST');
    assert.equal(c?.params.get('realm'), 'a "quoted" realm, with comma');
    const [d] = parseDigestChallenges('DIGEST Realm="r", NONCE=abc123, algorithm=md5-SESS, qop="auth,auth-int", stale=TRUE');
    assert.deepEqual(d, { realm: 'r', nonce: 'abc123', algorithm: 'MD5-sess', algorithmGiven: true, qop: ['auth', 'auth-int'], stale: true, userhash: false });
  });

  it('splits several challenges in one value and skips other schemes', () => {
    const all = parseAuthChallenges('Basic realm="x", Negotiate abc==, Digest realm="r1", nonce="n1", Digest realm="r2", nonce="n2", algorithm=SHA-256');
    assert.deepEqual(all.map((c) => c.scheme), ['Basic', 'Negotiate', 'Digest', 'Digest']);
    assert.equal(all[1]?.token68, 'abc==');
    assert.deepEqual(parseDigestChallenges('Basic realm="x", Digest realm="r1", nonce="n1"').map((c) => c.realm), ['r1']);
  });

  it('rejects malformed values in strict parsing and skips them in lenient parsing', () => {
    for (const bad of ['Digest realm="open', 'realm="x"', 'Digest realm="a", realm="b"', 'Digest nonce="n", realm=', 'Digest @@@']) {
      assert.throws(() => parseAuthChallenges(bad), SipParseError, bad);
    }
    assert.deepEqual(parseDigestChallenges(['Digest realm="open', 'Digest realm="ok", nonce="n"']).map((c) => c.realm), ['ok']);
    assert.deepEqual(parseDigestChallenges('Digest nonce="no realm"'), []);
  });

  it('chooses the strongest algorithm offered across headers', () => {
    const offer = (alg: string): string => `Digest realm="r", nonce="${alg}", algorithm=${alg}, qop="auth"`;
    assert.equal(only([offer('MD5'), offer('MD5-sess'), offer('SHA-256-sess')]).algorithm, 'SHA-256-sess');
    assert.equal(only([offer('MD5-sess'), offer('SHA-256'), offer('SHA-256-sess'), offer('MD5')]).algorithm, 'SHA-256');
    assert.equal(only([offer('SHA-512-256'), offer('MD5')]).algorithm, 'MD5');
    assert.equal(chooseDigestChallenge(parseDigestChallenges(offer('SHA-512-256'))), null);
    assert.equal(chooseDigestChallenge(parseDigestChallenges('Digest realm="r", nonce="n", qop="auth-conf"')), null);
  });
});

describe('digest credentials', () => {
  it('matches the RFC 2617 §3.5 example', () => {
    const challenge = only(
      'Digest realm="testrealm@host.com", qop="auth,auth-int", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41"',
    );
    const auth = buildDigestAuthorization({ challenge, username: 'Mufasa', password: 'Circle Of Life', method: 'GET', uri: '/dir/index.html', nc: 1, cnonce: '0a4f113b' });
    assert.equal(param(auth, 'response'), '6629fae49393a05397450978507c4ef1');
    assert.equal(param(auth, 'opaque'), '5ccc069c403ebaf9f0171e9517f40e41');
    assert.equal(param(auth, 'qop'), 'auth');
    assert.equal(param(auth, 'nc'), '00000001');
    assert.equal(param(auth, 'algorithm'), undefined, 'no algorithm named when the server named none');
    assert.match(auth, /^Digest username="Mufasa", realm="testrealm@host.com", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", uri="\/dir\/index.html"/);
  });

  it('matches the RFC 7616 §3.9.1 examples (SHA-256 preferred, MD5)', () => {
    const common = 'realm="http-auth@example.org", qop="auth, auth-int", nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"';
    const headers = [`Digest ${common}, algorithm=SHA-256`, `Digest ${common}, algorithm=MD5`];
    const input = { username: 'Mufasa', password: 'Circle of Life', method: 'GET', uri: '/dir/index.html', nc: 1, cnonce: 'f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ' };
    const sha = buildDigestAuthorization({ ...input, challenge: only(headers) });
    assert.equal(param(sha, 'algorithm'), 'SHA-256');
    assert.equal(param(sha, 'response'), '753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1');
    const md5Auth = buildDigestAuthorization({ ...input, challenge: only(headers[1] ?? '') });
    assert.equal(param(md5Auth, 'response'), '8ca523f5e9506fed4657c9700eebdbec');
  });

  it('uses the RFC 2069 form when no qop is offered', () => {
    const challenge = only('Digest realm="r", nonce="n0nce", opaque="o"');
    const auth = buildDigestAuthorization({ challenge, username: 'u', password: 'p', method: 'REGISTER', uri: 'sip:example.com' });
    assert.equal(param(auth, 'response'), md5(`${md5('u:r:p')}:n0nce:${md5('REGISTER:sip:example.com')}`));
    for (const absent of ['qop', 'nc', 'cnonce']) assert.equal(param(auth, absent), undefined, absent);
  });

  it('computes -sess, auth-int and increments nc', () => {
    const sess = only('Digest realm="r", nonce="n", algorithm=MD5-sess, qop=auth');
    const auth = buildDigestAuthorization({ challenge: sess, username: 'u', password: 'p', method: 'REGISTER', uri: 'sip:x', nc: 26, cnonce: 'c' });
    const ha1 = md5(`${md5('u:r:p')}:n:c`);
    assert.equal(param(auth, 'nc'), '0000001a');
    assert.equal(param(auth, 'response'), md5(`${ha1}:n:0000001a:c:auth:${md5('REGISTER:sip:x')}`));
    assert.equal(param(auth, 'algorithm'), 'MD5-sess');

    const int = only('Digest realm="r", nonce="n", qop="auth-int"');
    const withBody = buildDigestAuthorization({ challenge: int, username: 'u', password: 'p', method: 'REGISTER', uri: 'sip:x', cnonce: 'c', body: Buffer.from('b') });
    assert.equal(param(withBody, 'qop'), 'auth-int');
    assert.equal(param(withBody, 'response'), md5(`${md5('u:r:p')}:n:00000001:c:auth-int:${md5(`REGISTER:sip:x:${md5('b')}`)}`));
  });

  it('hashes the user name when the server asks for userhash', () => {
    const challenge = only('Digest realm="r", nonce="n", algorithm=SHA-256, qop=auth, userhash=true');
    const auth = buildDigestAuthorization({ challenge, username: 'Mufasa', password: 'p', method: 'GET', uri: '/', cnonce: 'c' });
    assert.equal(param(auth, 'username'), createHash('sha256').update('Mufasa:r').digest('hex'));
    assert.equal(param(auth, 'userhash'), 'true');
  });

  it('escapes quotes, uses a fresh cnonce and never leaks the password', () => {
    const challenge = only('Digest realm="r", nonce="n", qop=auth');
    const input = { challenge, username: 'a"b\\c', password: 'hunter2-secret', method: 'REGISTER', uri: 'sip:x' };
    const [one, two] = [buildDigestAuthorization(input), buildDigestAuthorization(input)];
    assert.equal(param(one, 'username'), 'a"b\\c');
    assert.notEqual(param(one, 'cnonce'), param(two, 'cnonce'));
    assert.ok(!one.includes('hunter2'));
    assert.throws(() => buildDigestAuthorization({ ...input, username: 'a\r\nb' }), /CR, LF/);
  });
});
