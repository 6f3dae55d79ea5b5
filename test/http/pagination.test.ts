import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';

for (const dialect of DIALECTS) {
  describe(`pagination and sorting (${dialect})`, () => {
    let t: TestApp;
    let a: Tenant;
    let url: string;
    const names: string[] = [];

    before(async () => {
      t = await buildTestApp(dialect);
      a = await createTenant(t, 'Acme');
      url = `/api/v1/vendors/${a.vendorId}/organizations`;
      names.push('acme main');
      for (let i = 0; i < 24; i++) {
        const name = `org ${String((i * 7) % 24).padStart(2, '0')}`;
        names.push(name);
        const res = await t.call('POST', url, { body: { name } });
        assert.equal(res.statusCode, 201);
      }
      await t.call('PUT', a.orgPath, { body: { name: 'acme main' } });
    });
    after(() => t.close());

    const list = async (query: string) => {
      const res = await t.call('GET', `${url}${query}`);
      return { status: res.statusCode, body: res.json() };
    };

    it('defaults to page 0, size 20, name ascending, with totals', async () => {
      const { status, body } = await list('');
      assert.equal(status, 200);
      assert.equal(body.success, true);
      assert.equal(body.page, 0);
      assert.equal(body.size, 20);
      assert.equal(body.totalElements, 25);
      assert.equal(body.totalPages, 2);
      assert.deepEqual(body.data.map((o: { name: string }) => o.name), [...names].sort().slice(0, 20));
    });

    it('walks pages; a page past the end is empty, not an error', async () => {
      const second = await list('?page=1');
      assert.deepEqual(second.body.data.map((o: { name: string }) => o.name), [...names].sort().slice(20));
      const past = await list('?page=9');
      assert.equal(past.status, 200);
      assert.deepEqual(past.body.data, []);
      assert.equal(past.body.totalElements, 25);
    });

    it('sorts descending, by other properties and by several keys', async () => {
      const desc = await list('?sort=name,desc&size=5');
      assert.deepEqual(desc.body.data.map((o: { name: string }) => o.name), [...names].sort().reverse().slice(0, 5));
      const created = await list('?sort=createdAt,asc&size=100');
      const times = created.body.data.map((o: { createdAt: string }) => o.createdAt);
      assert.deepEqual(times, [...times].sort());
      const updated = await list('?sort=updatedAt,desc&sort=name&size=1');
      assert.equal(updated.body.data[0].name, 'acme main', 'the last updated comes first');
      const bare = await list('?sort=name');
      assert.equal(bare.status, 200);
    });

    it('size 1..100 and page >= 0; bad sort properties or directions are 400 naming the parameter', async () => {
      assert.equal((await list('?size=100')).status, 200);
      assert.equal((await list('?size=100')).body.data.length, 25);
      for (const q of ['?size=0', '?size=101', '?page=-1', '?size=abc', '?page=1.5']) {
        const { status, body } = await list(q);
        assert.equal(status, 400, q);
        assert.equal(body.error.code, 'VALIDATION_FAILED');
      }
      for (const q of ['?sort=password,asc', '?sort=name,sideways', '?sort=', '?colour=blue']) {
        const { status, body } = await list(q);
        assert.equal(status, 400, q);
        assert.ok(body.error.details.length > 0, q);
      }
      const { body } = await list('?sort=secret');
      assert.match(body.error.details[0].path, /^sort/);
    });

    it('keeps totalElements right through creates and deletes', async () => {
      const created = await t.call('POST', url, { body: { name: 'zz temp' } });
      assert.equal((await list('')).body.totalElements, 26);
      await t.call('DELETE', created.headers.location as string);
      assert.equal((await list('')).body.totalElements, 25);
    });
  });
}
