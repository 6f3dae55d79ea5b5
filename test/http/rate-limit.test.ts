import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, createApiToken, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';

const LIMIT = 40;

for (const dialect of DIALECTS) {
  describe(`rate limiting per token (${dialect})`, () => {
    let t: TestApp;
    let second: TestApp;
    let a: Tenant;
    const clock = new ManualClock('2026-11-18T10:00:05Z');
    before(async () => {
      t = await buildTestApp(dialect, { PARLEY_RATE_LIMIT_PER_MINUTE: String(LIMIT) }, { clock });
      // A second process on the same database, sharing the quota.
      second = await buildTestApp(dialect, {}, { clock, reuse: { database: t.database, config: t.config } });
      a = await createTenant(t);
    });
    after(async () => {
      await second.app.close();
      await second.db.close();
      await t.close();
    });

    it('answers 429 with Retry-After and RateLimit headers past the limit, shared by two processes', async () => {
      const token = await createApiToken(t, a.vendorId, { role: 'viewer' });
      let ok = 0;
      let refused = 0;
      let last;
      for (let i = 0; i < LIMIT + 20; i++) {
        const app = i % 2 === 0 ? t : second;
        last = await app.call('GET', a.orgPath, { token });
        if (last.statusCode === 200) {
          ok++;
          assert.equal(last.headers['ratelimit-limit'], String(LIMIT));
          assert.equal(last.headers['ratelimit-policy'], `${LIMIT};w=60`);
          assert.ok(Number(last.headers['ratelimit-remaining']) >= 0);
        } else {
          refused++;
          assert.equal(last.statusCode, 429);
          assert.equal(last.json().error.code, 'RATE_LIMITED');
          assert.equal(last.headers['retry-after'], '55');
          assert.equal(last.headers['ratelimit-remaining'], '0');
        }
      }
      assert.ok(ok <= LIMIT, `${ok} served, over the limit of ${LIMIT}`);
      assert.ok(ok >= LIMIT - 2 * (LIMIT / 20), `${ok} served: refused too early`);
      assert.ok(refused >= 20);
      // Another token has its own quota; the next window starts afresh.
      const other = await createApiToken(t, a.vendorId, { role: 'viewer' });
      assert.equal((await t.call('GET', a.orgPath, { token: other })).statusCode, 200);
      clock.advance(60_000);
      assert.equal((await t.call('GET', a.orgPath, { token })).statusCode, 200);
    });
  });
}
