import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DIALECTS } from '../helpers/dialects.ts';
import { ADMIN_TOKEN, buildTestApp, createApiToken, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';

// One hash comparison decides every case: a few hundred mutations show it; MUTATION_RUNS=10000 for a long run.
const RUNS = Number(process.env.MUTATION_RUNS ?? 400);

for (const dialect of DIALECTS) {
  describe(`a token changed by one character (${dialect})`, () => {
    let t: TestApp;
    let a: Tenant;
    let token: string;
    before(async () => {
      // The limits would answer 429 to so many failures from one address (test/security/floods.test.ts).
      t = await buildTestApp(dialect, { PARLEY_RATE_LIMIT_PER_MINUTE: '0', PARLEY_FAILED_REQUESTS_PER_MINUTE: '0' });
      a = await createTenant(t);
      token = await createApiToken(t, a.vendorId, { role: 'admin' });
    });
    after(() => t.close());

    it(`is a 401, over ${RUNS} mutations of an API token and of the admin token`, { timeout: 300_000 }, async () => {
      assert.equal((await t.call('GET', a.orgPath, { token })).statusCode, 200);
      const printable = fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c));
      const mutation = fc.tuple(fc.constantFrom(token, ADMIN_TOKEN), fc.nat(), printable, fc.constantFrom('replace', 'insert', 'delete'));
      await fc.assert(
        fc.asyncProperty(mutation, async ([original, at, char, kind]) => {
          const i = at % original.length;
          const mutated = kind === 'replace' ? original.slice(0, i) + char + original.slice(i + 1)
            : kind === 'insert' ? original.slice(0, i) + char + original.slice(i)
            : original.slice(0, i) + original.slice(i + 1);
          fc.pre(mutated !== original);
          const res = await t.call('GET', a.orgPath, { token: mutated });
          assert.equal(res.statusCode, 401, `${kind} at ${i}: ${res.statusCode}`);
        }),
        { numRuns: RUNS },
      );
    });
  });
}
