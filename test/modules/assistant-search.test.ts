import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';

const NAMES = ['Front desk', 'front office', 'Frontier', 'Billing', 'Fr', 'Frp', 'Ärger', 'Front_desk%'];

for (const dialect of DIALECTS) {
  for (const plural of ['assistants', 'agents'] as const) {
    describe(`${plural}: q, the name prefix search (${dialect})`, () => {
      let t: TestApp;
      let a: Tenant;
      let other: Tenant;
      before(async () => {
        t = await buildTestApp(dialect);
        a = await createTenant(t);
        other = await createTenant(t, 'Other');
        for (const name of NAMES) await t.call('POST', `${a.orgPath}/${plural}`, { body: { name } });
        await t.call('POST', `${other.orgPath}/${plural}`, { body: { name: 'Front desk elsewhere' } });
        // The other kind shares the table: its rows must not match either.
        await t.call('POST', `${a.orgPath}/${plural === 'agents' ? 'assistants' : 'agents'}`, { body: { name: 'Front of the other kind' } });
      });
      after(() => t.close());

      const search = async (q: string, extra = '') => {
        const res = await t.call('GET', `${a.orgPath}/${plural}?q=${encodeURIComponent(q)}${extra}`);
        assert.equal(res.statusCode, 200, res.body);
        return res.json();
      };

      it('finds the names that start with q, ignoring ASCII case, sorted and counted', async () => {
        const page = await search('front');
        assert.deepEqual(page.data.map((x: any) => x.name), ['Front desk', 'Front_desk%', 'Frontier', 'front office']);
        assert.equal(page.totalElements, 4);
        assert.equal(page.totalPages, 1);
        assert.deepEqual((await search('FRONT D')).data.map((x: any) => x.name), ['Front desk']);
      });

      it('takes q literally: no wildcards, and the range ends exactly after the prefix', async () => {
        assert.deepEqual((await search('front_desk%')).data.map((x: any) => x.name), ['Front_desk%']);
        assert.deepEqual((await search('%')).data, []);
        assert.deepEqual((await search('fr', '&sort=name,desc&size=2')).data.map((x: any) => x.name), ['front office', 'Frp']);
        assert.equal((await search('fr', '&size=2')).totalElements, 6);
        assert.deepEqual((await search('Ärg')).data.map((x: any) => x.name), ['Ärger']);
        assert.deepEqual((await search('Ä')).data.map((x: any) => x.name), ['Ärger']);
        assert.deepEqual((await search('zzz')).data, []);
      });

      it('pages past the end are empty, and an empty, too long or NUL-holding q is a 400', async () => {
        assert.deepEqual((await search('front', '&page=3')).data, []);
        assert.equal((await t.call('GET', `${a.orgPath}/${plural}?q=`)).statusCode, 400);
        assert.equal((await t.call('GET', `${a.orgPath}/${plural}?q=${'x'.repeat(201)}`)).statusCode, 400);
        // PostgreSQL text holds no NUL: without the pattern this was a 500 there (found by the fuzz test).
        const nul = await t.call('GET', `${a.orgPath}/${plural}?q=a%00`);
        assert.equal(nul.statusCode, 400, nul.body);
        assert.match(nul.body, /q/);
      });
    });
  }
}
