import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { migrate } from '../../src/db/migrate.ts';
import { readJson } from '../../src/db/values.ts';
import type { StoredExtension, StoredHook } from '../../src/modules/assistants/items.ts';
import { MAX_VERSIONS } from '../../src/modules/assistants/versions.schemas.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { hook, strategyBody, toolWebhook } from '../helpers/fixtures.ts';

const MASK = '********';
const MERGE_PATCH = { 'content-type': 'application/merge-patch+json' };

for (const dialect of DIALECTS) {
  for (const plural of ['assistants', 'agents'] as const) {
    describe(`${plural}: versions (${dialect})`, () => {
      let t: TestApp;
      let a: Tenant;
      let url: string;
      let strategyId: string;
      let editor: { id: string; token: string };
      before(async () => {
        t = await buildTestApp(dialect);
        a = await createTenant(t);
        url = `${a.orgPath}/${plural}`;
        strategyId = (await t.call('POST', `${a.orgPath}/llm-generation-strategies`, { body: strategyBody })).json().data.id;
        const minted = await t.call('POST', `/api/v1/vendors/${a.vendorId}/api-tokens`, { body: { name: 'ci-deployer', role: 'editor', organizationId: a.organizationId } });
        editor = { id: minted.json().data.id, token: minted.json().data.token };
      });
      after(() => t.close());

      const full = (overrides: Record<string, unknown> = {}) => ({
        name: 'Front desk',
        systemPrompt: 'You are the front desk.',
        systemPromptGreeting: 'Hello, how can I help?',
        llmAudioContentGenerationStrategyId: strategyId,
        extensions: [toolWebhook('lookup_order'), { type: 'end_call', parameters: {} }],
        callEventHooks: [hook('transcript_ready', 'first-hook-secret')],
        ...overrides,
      });
      const create = async (body: Record<string, unknown> = full(), token?: string) => {
        const res = await t.call('POST', url, { body, ...(token ? { token } : {}) });
        assert.equal(res.statusCode, 201, res.body);
        return { id: res.json().data.id as string, item: res.headers.location as string };
      };
      const versions = async (item: string, query = '') => {
        const res = await t.call('GET', `${item}/versions${query}`);
        assert.equal(res.statusCode, 200, res.body);
        return res.json();
      };
      const version = async (item: string, n: number) => {
        const res = await t.call('GET', `${item}/versions/${n}`);
        assert.equal(res.statusCode, 200, res.body);
        return res.json().data;
      };
      const stored = async (id: string) => t.db.kysely.selectFrom('assistants').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

      it('create is version 1; each PUT or PATCH makes the next, saying what changed and which token made it; newest first, paged', async () => {
        const { item } = await create(full(), editor.token);
        assert.equal((await t.call('PUT', item, { body: full({ systemPrompt: 'Be brief.', extensions: [toolWebhook('lookup_order')] }) })).statusCode, 200);
        assert.equal((await t.call('PATCH', item, { body: { name: 'Reception' }, headers: MERGE_PATCH, token: editor.token })).statusCode, 200);
        const list = await versions(item);
        assert.deepEqual(list.data.map((v: any) => [v.number, v.summary, v.changes, v.token, v.restoredFrom]), [
          [3, 'name changed', ['name'], { id: editor.id, name: 'ci-deployer' }, null],
          [2, 'systemPrompt, extensions changed', ['systemPrompt', 'extensions'], null, null],
          [1, 'created', [], { id: editor.id, name: 'ci-deployer' }, null],
        ]);
        assert.equal(list.totalElements, 3);
        assert.ok(!JSON.stringify(list).includes(editor.token), 'never the token itself');
        const paged = await versions(item, '?size=2&page=1');
        assert.deepEqual([paged.data.map((v: any) => v.number), paged.totalPages], [[1], 2]);
        assert.deepEqual((await versions(item, '?sort=number,asc')).data.map((v: any) => v.number), [1, 2, 3]);
        assert.deepEqual((await versions(item, '?sort=createdAt,desc')).data.map((v: any) => v.number), [3, 2, 1]);
        const badSort = await t.call('GET', `${item}/versions?sort=name,asc`);
        assert.equal(badSort.statusCode, 400);
        assert.equal(badSort.json().error.details[0].path, 'sort[0]');
        assert.equal((await stored(item.split('/').at(-1) as string)).version, 3, 'the number is the row version the ETag carries');
      });

      it('an update that changes nothing makes no version: the same body again, secrets sent plain or masked, items without ids, an empty PATCH', async () => {
        const { id, item } = await create();
        const first = await t.call('GET', item);
        const read = first.json().data;
        // The body it was made with; the read shape sent back (ids, masks); new items equal to the stored ones.
        const same = [
          full(),
          { ...read },
          { ...read, extensions: full().extensions },
        ];
        for (const body of same) {
          const res = await t.call('PUT', item, { body });
          assert.equal(res.statusCode, 200, res.body);
        }
        assert.equal((await t.call('PATCH', item, { body: {}, headers: MERGE_PATCH })).statusCode, 200);
        const again = await t.call('GET', item);
        assert.equal(again.headers.etag, first.headers.etag, 'the same ETag');
        assert.deepEqual(again.json().data, read, 'the same ids and updatedAt: nothing was written');
        assert.equal((await versions(item)).totalElements, 1);
        const secretOnly = full({ extensions: [toolWebhook('lookup_order', { headers: { Authorization: 'Bearer rotated' } }), { type: 'end_call', parameters: {} }] });
        assert.equal((await t.call('PUT', item, { body: secretOnly })).statusCode, 200);
        const list = await versions(item);
        assert.deepEqual(list.data.map((v: any) => v.summary), ['extensions changed', 'created'], 'a new secret is a change');
        assert.equal((await stored(id)).version, 2);
      });

      it('a version shows the whole configuration as it was, write-only values masked', async () => {
        const { item } = await create();
        const before = (await t.call('GET', item)).json().data;
        assert.equal((await t.call('PATCH', item, { body: { systemPrompt: 'Changed.' }, headers: MERGE_PATCH })).statusCode, 200);
        const res = await t.call('GET', `${item}/versions/1`);
        assert.equal(res.statusCode, 200, res.body);
        const first = res.json().data;
        assert.deepEqual({ ...first, configuration: undefined }, {
          number: 1, createdAt: before.createdAt, token: null, summary: 'created', changes: [], restoredFrom: null, configuration: undefined,
        });
        assert.deepEqual(first.configuration, before, 'as a GET read it then');
        assert.equal(first.configuration.extensions[0].parameters.headers.Authorization, MASK);
        assert.equal(first.configuration.callEventHooks[0].parameters.secret, MASK);
        for (const secret of ['webhook-token-lookup_order', 'first-hook-secret', 'enc:v1:']) assert.ok(!res.body.includes(secret), `no ${secret}`);
        assert.equal((await version(item, 2)).configuration.systemPrompt, 'Changed.');
      });

      it('restore makes n+2 equal to n, with the secrets n had; restoring it again makes nothing', async () => {
        const { id, item } = await create();
        const v1 = await version(item, 1);
        const hookId = v1.configuration.callEventHooks[0].id;
        const changed = full({
          systemPrompt: 'Second prompt.',
          extensions: [toolWebhook('lookup_order', { headers: { Authorization: 'Bearer second-token' } })],
          callEventHooks: [{ id: hookId, type: 'transcript_ready', parameters: { url: 'https://hooks.example.com/parley', secret: 'second-hook-secret' } }],
        });
        assert.equal((await t.call('PUT', item, { body: changed, token: editor.token })).statusCode, 200);
        const secondHook = readJson<StoredHook[]>((await stored(id)).call_event_hooks)[0] as StoredHook;

        const res = await t.call('POST', `${item}/versions/1/restore`, { token: editor.token });
        assert.equal(res.statusCode, 201, res.body);
        assert.equal(res.headers.location, `${item}/versions/3`);
        const v3 = res.json().data;
        assert.deepEqual([v3.number, v3.restoredFrom, v3.summary, v3.token], [3, 1, 'restored version 1: systemPrompt, extensions, callEventHooks changed', { id: editor.id, name: 'ci-deployer' }]);
        const { updatedAt: _u1, ...was } = v1.configuration;
        const { updatedAt: _u3, ...now } = (await version(item, 3)).configuration;
        assert.deepEqual(now, was, 'version 3 is version 1, item ids included');
        const current = (await t.call('GET', item)).json().data;
        assert.deepEqual({ ...current, updatedAt: undefined }, { ...was, updatedAt: undefined });

        const row = await stored(id);
        const box = t.ctx.secrets;
        const tool = readJson<StoredExtension[]>(row.extensions)[0] as StoredExtension;
        assert.equal(box.open((tool.parameters.headers as Record<string, string>).Authorization as string), 'Bearer webhook-token-lookup_order', 'the header value version 1 had');
        const restoredHook = readJson<StoredHook[]>(row.call_event_hooks)[0] as StoredHook;
        assert.equal(box.open(restoredHook.secret), 'first-hook-secret', 'the hook secret version 1 had');
        assert.equal(restoredHook.previousSecret && box.open(restoredHook.previousSecret), box.open(secondHook.secret), 'the replaced secret keeps signing for a while, as after a PUT');

        const again = await t.call('POST', `${item}/versions/1/restore`);
        assert.equal(again.statusCode, 200, again.body);
        assert.equal(again.json().data.number, 3, 'the current version, which already is version 1');
        assert.match(again.json().message, /no version made/);
        assert.equal((await versions(item)).totalElements, 3);
        const back = await t.call('POST', `${item}/versions/2/restore`);
        assert.equal(back.statusCode, 201);
        assert.equal((await t.call('GET', item)).json().data.systemPrompt, 'Second prompt.');
      });

      it('a version naming what is gone is refused (409 at the field) and nothing changes; unknown versions and ids are 404, bad numbers 400', async () => {
        const spare = (await t.call('POST', `${a.orgPath}/llm-generation-strategies`, { body: { ...strategyBody, name: 'Spare' } })).json().data.id;
        const { item } = await create(full({ llmAudioContentGenerationStrategyId: spare }));
        assert.equal((await t.call('PATCH', item, { body: { llmAudioContentGenerationStrategyId: null }, headers: MERGE_PATCH })).statusCode, 200);
        assert.equal((await t.call('DELETE', `${a.orgPath}/llm-generation-strategies/${spare}`)).statusCode, 200);
        const before = (await t.call('GET', item)).json().data;
        const refused = await t.call('POST', `${item}/versions/1/restore`);
        assert.equal(refused.statusCode, 409, refused.body);
        assert.deepEqual(refused.json().error.details.map((d: any) => d.path), ['configuration.llmAudioContentGenerationStrategyId']);
        assert.deepEqual((await t.call('GET', item)).json().data, before);
        assert.equal((await versions(item)).totalElements, 2);

        // A tool URL the egress policy refuses now (allowed when the version was made, under another PARLEY_EGRESS_ALLOW).
        const id = item.split('/').at(-1) as string;
        const config = t.db.dialect === 'postgres' ? sql`configuration::text` : sql`configuration`;
        const moved = sql`replace(${config}, 'https://tools.example.com/orders', 'http://10.1.2.3/orders')`;
        await sql`update assistant_versions set configuration = ${t.db.dialect === 'postgres' ? sql`${moved}::jsonb` : moved} where assistant_id = ${id} and number = 1`.execute(t.db.kysely);
        const both = await t.call('POST', `${item}/versions/1/restore`);
        assert.equal(both.statusCode, 409, both.body);
        assert.deepEqual(both.json().error.details.map((d: any) => d.path), ['configuration.llmAudioContentGenerationStrategyId', 'configuration.extensions[0].parameters.serverUrl']);
        assert.match(both.json().error.details[1].message, /egress policy/);

        assert.equal((await t.call('GET', `${item}/versions/99`)).statusCode, 404);
        assert.equal((await t.call('POST', `${item}/versions/99/restore`)).statusCode, 404);
        for (const bad of ['0', 'abc', '1.5', '99999999999']) {
          const res = await t.call('GET', `${item}/versions/${bad}`);
          assert.equal(res.statusCode, 400, `${bad}: ${res.body}`);
          assert.equal(res.json().error.details[0].path, 'version');
        }
        const other = await createTenant(t, `Other ${plural}`);
        assert.equal((await t.call('GET', `${other.orgPath}/${plural}/${id}/versions`)).statusCode, 404, 'another organization');
        assert.equal((await t.call('GET', `${other.orgPath}/${plural}/${id}/versions/1`)).statusCode, 404);
        assert.equal((await t.call('POST', `${other.orgPath}/${plural}/${id}/versions/1/restore`)).statusCode, 404);
        const otherKind = plural === 'agents' ? 'assistants' : 'agents';
        assert.equal((await t.call('GET', `${a.orgPath}/${otherKind}/${id}/versions`)).statusCode, 404, 'the other kind');
        const viewer = (await t.call('POST', `/api/v1/vendors/${a.vendorId}/api-tokens`, { body: { name: 'v', role: 'viewer', organizationId: a.organizationId } })).json().data.token;
        assert.equal((await t.call('GET', `${item}/versions/1`, { token: viewer })).statusCode, 200);
        assert.equal((await t.call('POST', `${item}/versions/2/restore`, { token: viewer })).statusCode, 403);
      });

      it('deleting it deletes its versions', async () => {
        const { id, item } = await create();
        assert.equal((await t.call('PATCH', item, { body: { name: 'Doomed' }, headers: MERGE_PATCH })).statusCode, 200);
        assert.equal((await t.call('DELETE', item)).statusCode, 200);
        const left = await t.db.kysely.selectFrom('assistant_versions').select('number').where('assistant_id', '=', id).execute();
        assert.deepEqual(left, []);
        assert.equal((await t.call('GET', `${item}/versions`)).statusCode, 404);
      });
    });
  }

  describe(`versions: the limit, task pins, and databases from before versions (${dialect})`, () => {
    let t: TestApp;
    let a: Tenant;
    before(async () => {
      t = await buildTestApp(dialect);
      a = await createTenant(t);
    });
    after(() => t.close());

    it(`keeps the ${MAX_VERSIONS} newest versions, and any a task pins`, async () => {
      const agent = await t.call('POST', `${a.orgPath}/agents`, { body: { name: 'Campaign', systemPrompt: 'First.' } });
      const item = agent.headers.location as string;
      const tasks = `${item}/tasks`;
      const pinned = await t.call('POST', tasks, { body: { targetNumber: '+4930123456', agentVersion: 1 } });
      assert.equal(pinned.statusCode, 201, pinned.body);
      assert.equal(pinned.json().data.agentVersion, 1);
      assert.equal((await t.call('POST', tasks, { body: { targetNumber: '+4930123456' } })).json().data.agentVersion, null);
      for (let n = 2; n <= MAX_VERSIONS + 2; n++) {
        assert.equal((await t.call('PATCH', item, { body: { systemPrompt: `Prompt ${n}.` }, headers: MERGE_PATCH })).statusCode, 200);
      }
      const list = await t.call('GET', `${item}/versions?size=100&sort=number,asc`);
      assert.equal(list.json().totalElements, MAX_VERSIONS + 1, 'the newest ones and the pinned one');
      assert.deepEqual(list.json().data.slice(0, 2).map((v: any) => v.number), [1, 3]);
      assert.equal((await t.call('GET', `${item}/versions/2`)).statusCode, 404);
      assert.equal((await t.call('GET', `${item}/versions/1`)).json().data.configuration.systemPrompt, 'First.');

      const gone = await t.call('POST', tasks, { body: { targetNumber: '+4930123456', agentVersion: 2 } });
      assert.equal(gone.statusCode, 400);
      assert.deepEqual(gone.json().error.details.map((d: any) => d.path), ['agentVersion']);
      assert.match(gone.json().error.details[0].message, new RegExp(`no version 2 \\(its current version is ${MAX_VERSIONS + 2};`));
      const batch = await t.call('POST', `${tasks}/batch`, { body: { tasks: [{ targetNumber: '+4930123456', agentVersion: 1 }, { targetNumber: '+4930123456', agentVersion: 999 }] } });
      assert.equal(batch.statusCode, 400);
      assert.deepEqual(batch.json().error.details.map((d: any) => d.path), ['tasks[1].agentVersion']);
    });

    it('an assistant from before versions gets its configuration as its first version, numbered as its row', async () => {
      const created = await t.call('POST', `${a.orgPath}/assistants`, { body: { name: 'Old', systemPrompt: 'Old prompt.', callEventHooks: [hook('call_ended', 'old-secret')] } });
      const item = created.headers.location as string;
      for (const name of ['Older', 'Oldest']) assert.equal((await t.call('PATCH', item, { body: { name }, headers: MERGE_PATCH })).statusCode, 200);
      // The database as it was before 016: no versions, no version on calls and tasks.
      await sql`drop table assistant_versions`.execute(t.db.kysely);
      await sql`alter table calls drop column assistant_version`.execute(t.db.kysely);
      await sql`alter table agent_tasks drop column agent_version`.execute(t.db.kysely);
      await sql`delete from parley_migrations where name = '016_versions'`.execute(t.db.kysely);
      assert.deepEqual(await migrate(t.db), ['016_versions']);
      const list = (await t.call('GET', `${item}/versions`)).json();
      assert.deepEqual(list.data.map((v: any) => [v.number, v.summary, v.token]), [[3, 'as it was when versions began', null]]);
      const current = (await t.call('GET', item)).json().data;
      assert.deepEqual((await t.call('GET', `${item}/versions/3`)).json().data.configuration, current);
      assert.equal((await t.call('PATCH', item, { body: { systemPrompt: 'New prompt.' }, headers: MERGE_PATCH })).statusCode, 200);
      assert.equal((await t.call('POST', `${item}/versions/3/restore`)).statusCode, 201);
      const restored = (await t.call('GET', item)).json().data;
      assert.deepEqual({ ...restored, updatedAt: null }, { ...current, updatedAt: null });
    });
  });
}
