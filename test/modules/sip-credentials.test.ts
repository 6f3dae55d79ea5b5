import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { buildTestApp, createApiToken, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { startKamailio, type Kamailio } from '../helpers/kamailio.ts';

let k: Kamailio;
before(async () => (k = await startKamailio()));
after(async () => k?.stop());

const READ_KEYS = ['createdAt', 'hostname', 'id', 'maxAgentTasks', 'name', 'organizationId', 'port', 'register', 'registration', 'transport', 'updatedAt', 'username'];

for (const dialect of DIALECTS) {
  describe(`SIP credentials (${dialect})`, () => {
    let t: TestApp;
    let a: Tenant;
    let url: string;
    /** Every response body this suite saw, to prove no password is ever in one. */
    const bodies: string[] = [];
    const call: TestApp['call'] = async (method, path, opts) => {
      const res = await t.call(method, path, opts);
      bodies.push(res.body);
      return res;
    };
    const trunk = (over: Record<string, unknown> = {}) => ({
      name: 'Main trunk', hostname: k.host, port: k.udpPort, username: k.username, password: k.password, maxAgentTasks: 2, ...over,
    });
    const validate = async (location: string) => (await call('POST', `${location}/validate`)).json().data;

    before(async () => {
      t = await buildTestApp(dialect, { PARLEY_EGRESS_ALLOW: '127.0.0.0/8' }, { logLevel: 'debug' });
      a = await createTenant(t);
      url = `${a.orgPath}/sip/credentials`;
    });
    after(async () => {
      for (const body of bodies) assert.ok(!body.includes(k.password), 'no response ever carries the password');
      await t.close();
    });

    it('creates, reads, lists, replaces and deletes; the read shape has no password', async () => {
      const created = await call('POST', url, { body: trunk() });
      assert.equal(created.statusCode, 201, created.body);
      const data = created.json().data;
      assert.deepEqual(Object.keys(data).sort(), READ_KEYS);
      const { id: _id, createdAt: _c, updatedAt: _u, ...fields } = data;
      assert.deepEqual(fields, {
        organizationId: a.organizationId, name: 'Main trunk', hostname: k.host, port: k.udpPort, transport: 'udp', username: k.username, maxAgentTasks: 2,
        register: false, registration: null,
      });
      const location = created.headers.location as string;
      assert.equal(location, `${url}/${data.id}`);
      assert.deepEqual((await call('GET', location)).json().data, data);
      const list = (await call('GET', url)).json();
      assert.equal(list.totalElements, 1);
      assert.deepEqual(list.data, [data]);

      const replaced = { name: 'Renamed', hostname: 'sip.example.com', port: 5080, transport: 'tcp', username: 'bob', maxAgentTasks: 5 };
      // A kept password never follows a new server: moving the trunk needs the password again.
      const moved = await call('PUT', location, { body: replaced });
      assert.equal(moved.statusCode, 400);
      assert.deepEqual(moved.json().error.details.map((d: { path: string }) => d.path), ['password']);
      assert.equal((await call('GET', location)).json().data.hostname, k.host, 'nothing changed');
      assert.equal((await call('PUT', location, { body: { ...replaced, password: '********' } })).statusCode, 400, 'the mask keeps nothing on a move');
      // Renaming on the same server keeps the stored password.
      const { organizationId: _o, ...writable } = fields;
      assert.equal((await call('PUT', location, { body: { ...writable, name: 'Main trunk, renamed' } })).statusCode, 200);
      assert.equal((await call('PUT', location, { body: { ...replaced, password: 'new secret' } })).statusCode, 200);
      const read = (await call('GET', location)).json().data;
      assert.deepEqual({ name: read.name, hostname: read.hostname, port: read.port, transport: read.transport, username: read.username, maxAgentTasks: read.maxAgentTasks }, replaced);
      assert.ok(read.updatedAt >= data.updatedAt);

      assert.equal((await call('DELETE', location)).statusCode, 200);
      assert.equal((await call('GET', location)).statusCode, 404);
      assert.equal((await call('DELETE', location)).statusCode, 404);
      assert.equal((await call('GET', url)).json().totalElements, 0);
    });

    it('defaults: port 5060 (5061 with tls), transport udp, maxAgentTasks 1', async () => {
      const { port: _p, maxAgentTasks: _m, ...bare } = trunk();
      const udp = (await call('POST', url, { body: bare })).json().data;
      assert.deepEqual([udp.port, udp.transport, udp.maxAgentTasks], [5060, 'udp', 1]);
      const tls = (await call('POST', url, { body: { ...bare, transport: 'tls' } })).json().data;
      assert.deepEqual([tls.port, tls.transport], [5061, 'tls']);
      for (const id of [udp.id, tls.id]) assert.equal((await call('DELETE', `${url}/${id}`)).statusCode, 200);
    });

    it('the password is write-only: kept on a PUT without one, changed on a PUT with one', async () => {
      const location = (await call('POST', url, { body: trunk() })).headers.location as string;
      assert.deepEqual(await validate(location), { successful: true, statusCode: 200, reason: 'OK' });
      assert.equal(await k.bindings(k.username), 0);

      const { password: _pw, ...withoutPassword } = trunk({ name: 'Kept' });
      assert.equal((await call('PUT', location, { body: withoutPassword })).statusCode, 200);
      assert.equal((await validate(location)).successful, true, 'the stored password was kept');
      assert.equal((await call('PUT', location, { body: { ...withoutPassword, password: '********' } })).statusCode, 200);
      assert.equal((await validate(location)).successful, true, 'the mask keeps it too');

      assert.equal((await call('PUT', location, { body: trunk({ password: 'a-new-wrong-one' }) })).statusCode, 200);
      const wrong = await validate(location);
      assert.equal(wrong.successful, false, 'the new password is used');
      assert.ok(wrong.statusCode === 401 || wrong.statusCode === 403, String(wrong.statusCode));

      assert.equal((await call('PUT', location, { body: trunk() })).statusCode, 200);
      assert.equal((await validate(location)).successful, true);
      assert.equal(await k.bindings(k.username), 0);
      assert.equal((await call('DELETE', location)).statusCode, 200);
    });

    it('stores the password sealed, and logs it nowhere', async () => {
      const location = (await call('POST', url, { body: trunk({ name: 'Sealed' }) })).headers.location as string;
      assert.equal((await validate(location)).successful, true);
      const { rows } = await sql<Record<string, unknown>>`select * from sip_credentials`.execute(t.db.kysely);
      assert.equal(rows.length, 1);
      assert.match(String(rows[0]?.password_sealed), /^enc:v1:/);
      assert.ok(!JSON.stringify(rows).includes(k.password), 'not in the table');
      const logs = t.logs();
      assert.ok(logs.includes('sip register: response'), 'the validation was logged at debug');
      assert.ok(!logs.includes(k.password), 'not in the log');
      assert.equal((await call('DELETE', location)).statusCode, 200);
    });

    it('rejects invalid bodies, naming the field, and creates nothing', async () => {
      const { password: _pw, ...noPassword } = trunk();
      const cases: [unknown, string][] = [
        [trunk({ port: 0 }), 'port'],
        [trunk({ port: 65536 }), 'port'],
        [trunk({ port: 5060.5 }), 'port'],
        [trunk({ maxAgentTasks: 0 }), 'maxAgentTasks'],
        [trunk({ transport: 'sctp' }), 'transport'],
        [trunk({ colour: 'blue' }), 'colour'],
        [trunk({ password: 'line\r\nbreak' }), 'password'],
        [trunk({ hostname: 'sip.example.com:5060' }), 'hostname'],
        [trunk({ hostname: '999.1.2.3' }), 'hostname'],
        [trunk({ name: '' }), 'name'],
        [noPassword, 'password'],
      ];
      for (const [body, path] of cases) {
        const res = await call('POST', url, { body });
        assert.equal(res.statusCode, 400, JSON.stringify(body));
        assert.equal(res.json().error.code, 'VALIDATION_FAILED');
        assert.ok(res.json().error.details.some((d: { path: string }) => d.path === path), `${path}: ${res.body}`);
      }
      assert.equal((await call('GET', url)).json().totalElements, 0);
      const location = (await call('POST', url, { body: trunk() })).headers.location as string;
      for (const [body, path] of cases.slice(0, 10)) {
        const { password: _x, ...update } = body as Record<string, unknown>;
        const res = await call('PUT', location, { body: path === 'password' ? body : update });
        assert.equal(res.statusCode, 400, JSON.stringify(body));
      }
      assert.equal((await call('GET', location)).json().data.port, k.udpPort, 'unchanged');
      assert.equal((await call('DELETE', location)).statusCode, 200);
    });

    it('404 for credentials of another organization, for every operation', async () => {
      const other = await createTenant(t, 'Other');
      const foreign = await call('POST', `${other.orgPath}/sip/credentials`, { body: trunk() });
      const id = foreign.json().data.id;
      assert.equal((await call('GET', `${url}/${id}`)).statusCode, 404);
      assert.equal((await call('PUT', `${url}/${id}`, { body: trunk() })).statusCode, 404);
      assert.equal((await call('POST', `${url}/${id}/validate`)).statusCode, 404);
      assert.equal((await call('DELETE', `${url}/${id}`)).statusCode, 404);
      assert.equal((await call('GET', `${url}/00000000-0000-4000-8000-000000000000`)).statusCode, 404);
      assert.equal((await call('GET', `${other.orgPath}/sip/credentials/${id}`)).statusCode, 200, 'still there');
      assert.equal((await call('DELETE', `${other.orgPath}/sip/credentials/${id}`)).statusCode, 200);
    });

    it('409 when deleting credentials that a SIP number uses, and on deleting an organization that has them', async () => {
      const location = (await call('POST', url, { body: trunk() })).headers.location as string;
      const id = location.split('/').at(-1);
      const number = await call('POST', `${a.orgPath}/sip/numbers`, { body: { number: '+4930123456', sipCredentialId: id } });
      assert.equal(number.statusCode, 201, number.body);
      const res = await call('DELETE', location);
      assert.equal(res.statusCode, 409);
      assert.equal(res.json().error.code, 'CONFLICT');
      assert.match(res.json().message, /\+4930123456/);

      const org = await t.call('POST', `/api/v1/vendors/${a.vendorId}/organizations`, { body: { name: 'Short-lived' } });
      const orgPath = `/api/v1/vendors/${a.vendorId}/organizations/${org.json().data.id}`;
      const held = (await call('POST', `${orgPath}/sip/credentials`, { body: trunk() })).headers.location as string;
      assert.equal((await t.call('DELETE', orgPath)).statusCode, 409);
      assert.equal((await call('DELETE', held)).statusCode, 200);
      assert.equal((await t.call('DELETE', orgPath)).statusCode, 200);

      assert.equal((await call('DELETE', number.headers.location as string)).statusCode, 200);
      assert.equal((await call('DELETE', location)).statusCode, 200);
    });

    it('sip:read lists and reads; writing and validating need sip:write', async () => {
      const location = (await call('POST', url, { body: trunk() })).headers.location as string;
      const viewer = await createApiToken(t, a.vendorId, { role: 'viewer', organizationId: a.organizationId });
      assert.equal((await call('GET', url, { token: viewer })).statusCode, 200);
      assert.equal((await call('GET', location, { token: viewer })).statusCode, 200);
      assert.equal((await call('POST', url, { token: viewer, body: trunk() })).statusCode, 403);
      assert.equal((await call('PUT', location, { token: viewer, body: trunk() })).statusCode, 403);
      assert.equal((await call('POST', `${location}/validate`, { token: viewer })).statusCode, 403);
      assert.equal((await call('DELETE', location, { token: viewer })).statusCode, 403);
      const sipOnly = await createApiToken(t, a.vendorId, { permissions: ['sip:read', 'sip:write'], organizationId: a.organizationId });
      assert.equal((await validate(location)).successful, true);
      assert.equal((await call('DELETE', location, { token: sipOnly })).statusCode, 200);
    });

    it('lists paginated and sorted by name', async () => {
      for (const name of ['Charlie', 'Alpha', 'Bravo']) assert.equal((await call('POST', url, { body: trunk({ name }) })).statusCode, 201);
      const names = (body: { data: { name: string }[] }) => body.data.map((c) => c.name);
      const first = (await call('GET', `${url}?size=2&sort=name,desc`)).json();
      assert.deepEqual([first.totalElements, first.totalPages, names(first)], [3, 2, ['Charlie', 'Bravo']]);
      assert.deepEqual(names((await call('GET', `${url}?size=2&page=1&sort=name,desc`)).json()), ['Alpha']);
      const all = (await call('GET', url)).json().data;
      assert.deepEqual(all.map((c: { name: string }) => c.name), ['Alpha', 'Bravo', 'Charlie']);
      assert.equal((await call('GET', `${url}?sort=password,asc`)).statusCode, 400);
      for (const c of all) assert.equal((await call('DELETE', `${url}/${c.id}`)).statusCode, 200);
    });
  });
}
