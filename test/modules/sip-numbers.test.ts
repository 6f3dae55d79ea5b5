import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/dialects.ts';

// These credentials are only stored, never validated: nothing is sent anywhere.
const trunk = { name: 'Trunk', hostname: 'sip.example.com', username: 'acme', password: 'never-sent' };
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

for (const dialect of DIALECTS) {
  describe(`SIP numbers (${dialect})`, () => {
    let t: TestApp;
    let a: Tenant;
    let b: Tenant;
    let url: string;
    let credentialId: string;
    let foreignCredentialId: string;
    let foreignNumberId: string;
    const errorPaths = (body: string) => (JSON.parse(body).error.details as { path: string }[]).map((d) => d.path);

    before(async () => {
      t = await buildTestApp(dialect);
      a = await createTenant(t);
      b = await createTenant(t, 'Other');
      url = `${a.orgPath}/sip/numbers`;
      credentialId = (await t.call('POST', `${a.orgPath}/sip/credentials`, { body: trunk })).json().data.id;
      foreignCredentialId = (await t.call('POST', `${b.orgPath}/sip/credentials`, { body: trunk })).json().data.id;
      const foreign = await t.call('POST', `${b.orgPath}/sip/numbers`, { body: { number: '+4930999999', sipCredentialId: foreignCredentialId } });
      assert.equal(foreign.statusCode, 201, foreign.body);
      foreignNumberId = foreign.json().data.id;
    });
    after(() => t.close());

    it('creates with the number in E.164, reads, lists, replaces and deletes', async () => {
      const created = await t.call('POST', url, { body: { number: '+49 (30) 123-456', sipCredentialId: credentialId, name: 'Berlin' } });
      assert.equal(created.statusCode, 201, created.body);
      const data = created.json().data;
      assert.equal(data.number, '+4930123456');
      assert.equal(data.sipCredentialId, credentialId);
      assert.equal(data.organizationId, a.organizationId);
      assert.equal(data.name, 'Berlin');
      const location = created.headers.location as string;
      assert.equal(location, `${url}/${data.id}`);
      assert.deepEqual((await t.call('GET', location)).json().data, data);
      assert.deepEqual((await t.call('GET', url)).json().data, [data]);

      const put = await t.call('PUT', location, { body: { number: '+1.415.555.0100', sipCredentialId: credentialId } });
      assert.equal(put.statusCode, 200, put.body);
      const read = (await t.call('GET', location)).json().data;
      assert.equal(read.number, '+14155550100');
      assert.equal(read.name, '+14155550100', 'the name defaults to the number');
      assert.equal((await t.call('DELETE', location)).statusCode, 200);
      assert.equal((await t.call('GET', location)).statusCode, 404);
      assert.equal((await t.call('GET', url)).json().totalElements, 0);
    });

    it('400 on numbers that are not valid E.164 numbers, naming number', async () => {
      for (const number of ['030 123456', '0049 30 123456', '+0 30 123456', 'call me', '+49 30 12x456', '+123', '+1234567', '+49 900 12345678', '']) {
        const res = await t.call('POST', url, { body: { number, sipCredentialId: credentialId } });
        assert.equal(res.statusCode, 400, number);
        assert.ok(errorPaths(res.body).includes('number'), `${number}: ${res.body}`);
      }
      const unknownField = await t.call('POST', url, { body: { number: '+4930123456', sipCredentialId: credentialId, carrier: 'x' } });
      assert.deepEqual([unknownField.statusCode, errorPaths(unknownField.body)], [400, ['carrier']]);
      assert.equal((await t.call('GET', url)).json().totalElements, 0);
    });

    it('reads the (0) trunk prefix as the numbering plan says, and takes a valid number of any type', async () => {
      const cases: [string, string][] = [['+44 (0)20 7946 0958', '+442079460958'], ['+39 (0)6 1234 5678', '+390612345678'], ['+1 900 555 0100', '+19005550100']];
      for (const [number, stored] of cases) {
        const res = await t.call('POST', url, { body: { number, sipCredentialId: credentialId } });
        assert.equal(res.statusCode, 201, res.body);
        assert.equal(res.json().data.number, stored);
        assert.equal((await t.call('DELETE', res.headers.location as string)).statusCode, 200);
      }
    });

    it('a number is unique per organization (409 on number), in any spelling', async () => {
      const first = await t.call('POST', url, { body: { number: '+4940111111', sipCredentialId: credentialId } });
      assert.equal(first.statusCode, 201);
      const again = await t.call('POST', url, { body: { number: '+49 40 111 111', sipCredentialId: credentialId } });
      assert.equal(again.statusCode, 409);
      assert.equal(again.json().error.code, 'CONFLICT');
      assert.deepEqual(errorPaths(again.body), ['number']);
      const otherTrunk = await t.call('POST', `${b.orgPath}/sip/credentials`, { body: { ...trunk, hostname: 'sip.other-carrier.example' } });
      const elsewhere = await t.call('POST', `${b.orgPath}/sip/numbers`, { body: { number: '+4940111111', sipCredentialId: otherTrunk.json().data.id } });
      assert.equal(elsewhere.statusCode, 201, 'another organization may hold the same number on another trunk');

      const second = await t.call('POST', url, { body: { number: '+4940222222', sipCredentialId: credentialId } });
      const secondUrl = second.headers.location as string;
      assert.equal((await t.call('PUT', secondUrl, { body: { number: '+4940111111', sipCredentialId: credentialId } })).statusCode, 409);
      assert.equal((await t.call('PUT', secondUrl, { body: { number: '+4940222222', sipCredentialId: credentialId, name: 'Same' } })).statusCode, 200);
      for (const location of [first.headers.location, secondUrl, elsewhere.headers.location, otherTrunk.headers.location]) {
        assert.equal((await t.call('DELETE', location as string)).statusCode, 200);
      }
      assert.equal((await t.call('GET', url)).json().totalElements, 0);
    });

    it('a number another organization has on the same trunk address (a shared SBC) is a 409 naming it; written in any spelling of the address, and by moving credentials there', async () => {
      // Issue 25, defect 4: B claims the number first on credentials naming the shared SBC; A's
      // later claim was a 201, and A's callers were then answered by B's assistant.
      const sbc = async (org: Tenant, hostname: string) => (await t.call('POST', `${org.orgPath}/sip/credentials`, { body: { ...trunk, name: 'SBC', hostname } })).json().data.id as string;
      const bOnSbc = await sbc(b, 'sbc.shared.example');
      const taken = await t.call('POST', `${b.orgPath}/sip/numbers`, { body: { number: '+12125550300', sipCredentialId: bOnSbc } });
      assert.equal(taken.statusCode, 201, taken.body);
      const before = (await t.call('GET', url)).json().totalElements;
      for (const hostname of ['sbc.shared.example', 'SBC.Shared.Example.']) {
        const aOnSbc = await sbc(a, hostname);
        const claim = await t.call('POST', url, { body: { number: '+1 212 555 0300', sipCredentialId: aOnSbc } });
        assert.equal(claim.statusCode, 409, `${hostname}: ${claim.body}`);
        assert.equal(claim.json().error.code, 'CONFLICT');
        assert.deepEqual(errorPaths(claim.body), ['number']);
        assert.match(claim.json().message, /\+12125550300 on the trunk address sbc\.shared\.example/);
        assert.doesNotMatch(claim.body, new RegExp(b.organizationId), 'the other organization is not named');
        assert.equal((await t.call('DELETE', `${a.orgPath}/sip/credentials/${aOnSbc}`)).statusCode, 200);
      }
      assert.equal((await t.call('GET', url)).json().totalElements, before, 'nothing was created');

      // IP addresses in other spellings are the same address.
      const bOnIp = await sbc(b, '2001:db8::5');
      assert.equal((await t.call('POST', `${b.orgPath}/sip/numbers`, { body: { number: '+12125550301', sipCredentialId: bOnIp } })).statusCode, 201);
      const aOnIp = await sbc(a, '[2001:0db8:0:0::5]');
      assert.equal((await t.call('POST', url, { body: { number: '+12125550301', sipCredentialId: aOnIp } })).statusCode, 409);

      // Claimed on another host first, then the credentials are moved to the SBC: the same 409, nothing changes.
      const aElsewhere = await sbc(a, 'sip.a-only.example');
      const moved = await t.call('POST', url, { body: { number: '+12125550300', sipCredentialId: aElsewhere } });
      assert.equal(moved.statusCode, 201, moved.body);
      const move = await t.call('PATCH', `${a.orgPath}/sip/credentials/${aElsewhere}`, { body: { hostname: 'sbc.shared.example', password: 'again' }, headers: { 'content-type': 'application/merge-patch+json' } });
      assert.equal(move.statusCode, 409, move.body);
      assert.deepEqual(errorPaths(move.body), ['number']);
      assert.equal((await t.call('GET', `${a.orgPath}/sip/credentials/${aElsewhere}`)).json().data.hostname, 'sip.a-only.example');

      for (const location of [moved.headers.location, taken.headers.location]) assert.equal((await t.call('DELETE', location as string)).statusCode, 200);
      const leftover = (await t.call('GET', `${b.orgPath}/sip/numbers`)).json().data.filter((n: { number: string }) => n.number === '+12125550301');
      for (const n of leftover) assert.equal((await t.call('DELETE', `${b.orgPath}/sip/numbers/${n.id}`)).statusCode, 200);
      for (const [org, id] of [[a, aElsewhere], [a, aOnIp], [b, bOnSbc], [b, bOnIp]] as const) {
        assert.equal((await t.call('DELETE', `${org.orgPath}/sip/credentials/${id}`)).statusCode, 200);
      }
    });

    it('two organizations claiming one number on one trunk at the same time: one 201, one 409', async () => {
      const sbcOf = async (org: Tenant) => (await t.call('POST', `${org.orgPath}/sip/credentials`, { body: { ...trunk, name: 'SBC', hostname: '192.0.2.40' } })).json().data.id as string;
      const [aSbc, bSbc] = [await sbcOf(a), await sbcOf(b)];
      const claims = await Promise.all([
        t.call('POST', url, { body: { number: '+12125550302', sipCredentialId: aSbc } }),
        t.call('POST', `${b.orgPath}/sip/numbers`, { body: { number: '+12125550302', sipCredentialId: bSbc } }),
      ]);
      assert.deepEqual(claims.map((c) => c.statusCode).sort(), [201, 409], claims.map((c) => c.body).join('\n'));
      const won = claims.find((c) => c.statusCode === 201)!;
      assert.equal((await t.call('DELETE', won.headers.location as string)).statusCode, 200);
      for (const [org, id] of [[a, aSbc], [b, bSbc]] as const) assert.equal((await t.call('DELETE', `${org.orgPath}/sip/credentials/${id}`)).statusCode, 200);
    });

    it('400 on sipCredentialId of another organization or none', async () => {
      for (const sipCredentialId of [foreignCredentialId, UNKNOWN]) {
        const res = await t.call('POST', url, { body: { number: '+4930123456', sipCredentialId } });
        assert.deepEqual([res.statusCode, errorPaths(res.body)], [400, ['sipCredentialId']]);
      }
      const ok = await t.call('POST', url, { body: { number: '+4930123456', sipCredentialId: credentialId } });
      const put = await t.call('PUT', ok.headers.location as string, { body: { number: '+4930123456', sipCredentialId: foreignCredentialId } });
      assert.deepEqual([put.statusCode, errorPaths(put.body)], [400, ['sipCredentialId']]);
      assert.equal((await t.call('DELETE', ok.headers.location as string)).statusCode, 200);
    });

    it('404 for a number of another organization', async () => {
      const body = { number: '+4930999999', sipCredentialId: credentialId };
      assert.equal((await t.call('GET', `${url}/${foreignNumberId}`)).statusCode, 404);
      assert.equal((await t.call('PUT', `${url}/${foreignNumberId}`, { body })).statusCode, 404);
      assert.equal((await t.call('DELETE', `${url}/${foreignNumberId}`)).statusCode, 404);
      assert.equal((await t.call('GET', `${b.orgPath}/sip/numbers/${foreignNumberId}`)).json().data.number, '+4930999999');
    });

    it('assistants and agents may only use a SIP number of their organization; a used number cannot be deleted', async () => {
      const number = await t.call('POST', url, { body: { number: '+4930555555', sipCredentialId: credentialId } });
      const numberId = number.json().data.id;
      for (const plural of ['assistants', 'agents']) {
        for (const telephoneNumberId of [foreignNumberId, UNKNOWN]) {
          const res = await t.call('POST', `${a.orgPath}/${plural}`, { body: { name: 'Bot', telephoneNumberId } });
          assert.deepEqual([res.statusCode, errorPaths(res.body)], [400, ['telephoneNumberId']], `${plural}: ${res.body}`);
        }
        const bot = await t.call('POST', `${a.orgPath}/${plural}`, { body: { name: 'Bot', telephoneNumberId: numberId } });
        assert.equal(bot.statusCode, 201, bot.body);
        assert.equal(bot.json().data.telephoneNumberId, numberId);
        const botUrl = bot.headers.location as string;
        const update = { name: 'Bot', systemPrompt: null, systemPromptGreeting: null, llmAudioContentGenerationStrategyId: null, extensions: [], callEventHooks: [] };
        const foreignPut = await t.call('PUT', botUrl, { body: { ...update, telephoneNumberId: foreignNumberId } });
        assert.deepEqual([foreignPut.statusCode, errorPaths(foreignPut.body)], [400, ['telephoneNumberId']]);
        assert.equal((await t.call('PUT', botUrl, { body: update })).statusCode, 200, 'left out keeps the number');

        const blocked = await t.call('DELETE', number.headers.location as string);
        assert.equal(blocked.statusCode, 409);
        assert.match(blocked.json().message, /uses this number/);
        const credentialsBlocked = await t.call('DELETE', `${a.orgPath}/sip/credentials/${credentialId}`);
        assert.equal(credentialsBlocked.statusCode, 409, 'the number still uses the credentials');

        assert.equal((await t.call('PUT', botUrl, { body: { ...update, telephoneNumberId: null } })).statusCode, 200);
        assert.equal((await t.call('GET', botUrl)).json().data.telephoneNumberId, null);
        assert.equal((await t.call('DELETE', botUrl)).statusCode, 200);
      }
      assert.equal((await t.call('DELETE', number.headers.location as string)).statusCode, 200);
    });

    it('lists sorted by number; an organization with numbers cannot be deleted', async () => {
      for (const n of ['+4930300000', '+4930100000', '+4930200000']) {
        assert.equal((await t.call('POST', url, { body: { number: n, sipCredentialId: credentialId } })).statusCode, 201);
      }
      const page = (await t.call('GET', `${url}?sort=number,desc&size=2`)).json();
      assert.deepEqual([page.totalElements, page.data.map((n: { number: string }) => n.number)], [3, ['+4930300000', '+4930200000']]);
      assert.equal((await t.call('GET', `${url}?sort=sipCredentialId,asc`)).statusCode, 400);
      const org = await t.call('DELETE', a.orgPath);
      assert.equal(org.statusCode, 409);
      for (const n of (await t.call('GET', url)).json().data) assert.equal((await t.call('DELETE', `${url}/${n.id}`)).statusCode, 200);
      assert.equal((await t.call('DELETE', `${a.orgPath}/sip/credentials/${credentialId}`)).statusCode, 200, 'unused credentials go');
      credentialId = (await t.call('POST', `${a.orgPath}/sip/credentials`, { body: trunk })).json().data.id;
    });
  });
}
