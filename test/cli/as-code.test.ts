import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { createParley } from '@parley/sdk';
import { runCli } from '../../src/cli/program.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { ADMIN_TOKEN, buildTestApp, createApiToken, createTenant, type TestApp, type Tenant } from '../helpers/app.ts';
import { hook, strategyBody, toolWebhook } from '../helpers/fixtures.ts';

/** The values that must never reach the disk. */
const SECRETS = { header: 'Bearer tool-secret-7f3a9c', hook: 'whsec_hooksecret_5d1e2b8c0a7f', sip: 'sip-password-9c2e4a' };
/** One command's run; a slow start at load 14 took 7 s. */
const CLI_TIMEOUT_MS = 90_000;


interface Ran {
  code: number | null;
  out: string;
  err: string;
}

/**
 * The real `parley` process as users run it (bin/parley.js, the built dist/: scripts/test.sh
 * builds it first; it starts in half the time of the TypeScript sources through tsx), with only
 * the environment given (and PATH).
 */
function parley(argv: string[], env: Record<string, string>): Promise<Ran> {
  assert.ok(existsSync('dist/cli.js'), 'dist/ is built (scripts/test.sh runs npm run build first)');
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/parley.js', ...argv], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: CLI_TIMEOUT_MS }, (error, out, err) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, out, err });
    });
  });
}

/** Every file under dir, as text. */
function everything(dir: string): string {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile())
    .map((path) => readFileSync(path, 'utf8'))
    .join('\n');
}

const edit = (path: string, from: string | RegExp, to: string) => writeFileSync(path, readFileSync(path, 'utf8').replace(from, to));

describe('parley pull, diff and push: the command line', () => {
  it('parley --help lists them, each answers --help, and each needs the organization', { timeout: 60_000 }, async () => {
    const run = async (argv: string[]) => {
      const stdout = new PassThrough();
      let out = '';
      stdout.on('data', (c: Buffer) => (out += c.toString()));
      const stderr = new PassThrough();
      let err = '';
      stderr.on('data', (c: Buffer) => (err += c.toString()));
      const code = await runCli(argv, { stdout, stderr, stdin: new PassThrough(), env: { PARLEY_TOKEN: 'prl_x' } });
      return { code, out, err };
    };
    const help = await run(['--help']);
    for (const command of ['pull', 'diff', 'push']) {
      assert.match(help.out, new RegExp(`\\n  ${command} \\[options\\] <dir>`), command);
      const one = await run([command, '--help']);
      assert.equal(one.code, 0);
      assert.match(one.out, new RegExp(`^Usage: parley ${command} \\[options\\] <dir>`));
      assert.match(one.out, /docs\/as-code\.md/);
      const scope = await run([command, 'somewhere']);
      assert.equal(scope.code, 1);
      assert.match(scope.err, /set PARLEY_VENDOR and PARLEY_ORGANIZATION/);
    }
    assert.match((await run(['push', '--help'])).out, /--prune[\s\S]*--force/);
  });
});

for (const dialect of DIALECTS) {
  describe(`parley pull, diff and push (${dialect})`, { timeout: 20 * CLI_TIMEOUT_MS }, () => {
    let t: TestApp;
    let tenant: Tenant;
    let env: Record<string, string>;
    let dir: string;
    let org: ReturnType<ReturnType<typeof createParley>['organization']>;
    let assistantId: string;
    let secretEnv: Record<string, string>;

    before(async () => {
      t = await buildTestApp(dialect);
      tenant = await createTenant(t);
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      const url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      const token = await createApiToken(t, tenant.vendorId, { role: 'admin', organizationId: tenant.organizationId }, ADMIN_TOKEN);
      env = { PARLEY_URL: url, PARLEY_TOKEN: token, PARLEY_VENDOR: tenant.vendorId, PARLEY_ORGANIZATION: tenant.organizationId };
      org = createParley({ baseUrl: url, token }).organization(tenant.vendorId, tenant.organizationId);
      const strategy = await org.createLlmGenerationStrategy({ body: strategyBody as never });
      const credential = await org.createSipCredential({ body: { name: 'Trunk A', hostname: 'sip.example.com', username: 'acme', password: SECRETS.sip } });
      const number = await org.createSipNumber({ body: { name: 'Sales line', number: '+14155550100', sipCredentialId: credential.id } });
      const assistant = await org.createAssistant({
        body: {
          name: 'Order Desk',
          systemPrompt: 'Be brief.',
          llmAudioContentGenerationStrategyId: strategy.id,
          telephoneNumberId: number.id,
          extensions: [toolWebhook('lookup_order', { headers: { Authorization: SECRETS.header } })],
          callEventHooks: [hook('call_ended', SECRETS.hook)],
        } as never,
      });
      assistantId = assistant.id;
      // The same name twice: the second one's file is order-desk-2.yaml.
      await org.createAssistant({ body: { name: 'Order Desk', systemPrompt: 'The other one.' } });
      await org.createAgent({ body: { name: 'Outbound', systemPrompt: 'Call people.' } });
      dir = mkdtempSync(join(tmpdir(), 'parley-as-code-'));
    }, { timeout: 120_000 });
    after(async () => {
      await t.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('pull → edit → diff → push → a second push changes nothing; a change on the service is refused, --force overrides; --prune deletes; no secret on disk', { timeout: 16 * CLI_TIMEOUT_MS }, async () => {
      // pull writes one file per resource, references by name, placeholders for every secret, and the lock.
      const pulled = await parley(['pull', dir], env);
      assert.equal(pulled.code, 0, pulled.err);
      assert.match(pulled.out, /pulled 1 strategies, 1 sip-credentials, 1 sip-numbers, 2 assistants, 1 agents/);
      for (const file of ['strategies/warm-voice.yaml', 'sip-credentials/trunk-a.yaml', 'sip-numbers/sales-line.yaml', 'assistants/order-desk.yaml', 'assistants/order-desk-2.yaml', 'agents/outbound.yaml', '.parley-lock.yaml']) {
        assert.ok(existsSync(join(dir, file)), file);
      }
      const desk = readFileSync(join(dir, 'assistants/order-desk.yaml'), 'utf8');
      assert.match(desk, /^strategy: Warm voice$/m);
      assert.match(desk, /^telephoneNumber: Sales line$/m);
      assert.match(desk, /Authorization: \$\{PARLEY_SECRET_ASSISTANT_ORDER_DESK_EXTENSIONS_LOOKUP_ORDER_PARAMETERS_HEADERS_AUTHORIZATION\}/);
      assert.match(desk, /secret: \$\{PARLEY_SECRET_ASSISTANT_ORDER_DESK_CALLEVENTHOOKS_CALL_ENDED_PARAMETERS_SECRET\}/);
      assert.doesNotMatch(desk, /\bid:/, 'no ids in a file');
      assert.match(readFileSync(join(dir, 'sip-numbers/sales-line.yaml'), 'utf8'), /^sipCredential: Trunk A$/m);
      assert.match(readFileSync(join(dir, 'sip-credentials/trunk-a.yaml'), 'utf8'), /^password: \$\{PARLEY_SECRET_SIP_CREDENTIAL_TRUNK_A_PASSWORD\}$/m);
      const all = everything(dir);
      for (const secret of Object.values(SECRETS)) assert.ok(!all.includes(secret), 'no secret value on disk');
      assert.doesNotMatch(all, /\*{8}/, 'no mask on disk either: placeholders');
      secretEnv = {
        PARLEY_SECRET_ASSISTANT_ORDER_DESK_EXTENSIONS_LOOKUP_ORDER_PARAMETERS_HEADERS_AUTHORIZATION: SECRETS.header,
        PARLEY_SECRET_ASSISTANT_ORDER_DESK_CALLEVENTHOOKS_CALL_ENDED_PARAMETERS_SECRET: SECRETS.hook,
        PARLEY_SECRET_SIP_CREDENTIAL_TRUNK_A_PASSWORD: SECRETS.sip,
      };
      // A second pull writes the same bytes.
      const again = mkdtempSync(join(tmpdir(), 'parley-as-code-again-'));
      try {
        assert.equal((await parley(['pull', again], env)).code, 0);
        assert.equal(everything(again), all);
      } finally {
        rmSync(again, { recursive: true, force: true });
      }

      // diff after a pull shows nothing; after an edit, the field: old → new.
      const clean = await parley(['diff', dir], env);
      assert.equal(clean.code, 0, clean.err);
      assert.equal(clean.out, 'diff: 0 to create, 0 to update, 0 to delete, 6 unchanged\n');
      edit(join(dir, 'assistants/order-desk.yaml'), /^systemPrompt: .*$/m, 'systemPrompt: Be brief and kind.');
      const edited = await parley(['diff', dir], env);
      assert.equal(edited.code, 0, edited.err);
      assert.equal(edited.out, '~ assistants/order-desk.yaml: update\n    systemPrompt: "Be brief." → "Be brief and kind."\ndiff: 0 to create, 1 to update, 0 to delete, 5 unchanged\n');

      // push needs every placeholder's variable, naming it and its file; then applies the edit as
      // one version, and a second push changes nothing.
      const missing = await parley(['push', dir], env);
      assert.equal(missing.code, 1);
      assert.match(missing.err, /PARLEY_SECRET_ASSISTANT_ORDER_DESK_CALLEVENTHOOKS_CALL_ENDED_PARAMETERS_SECRET \(assistants\/order-desk\.yaml\)/);
      assert.equal((await org.getAssistant({ path: { assistantId } })).systemPrompt, 'Be brief.', 'nothing changed');

      const pushed = await parley(['push', dir], { ...env, ...secretEnv });
      assert.equal(pushed.code, 0, pushed.err);
      assert.match(pushed.out, /^updated assistants\/order-desk\.yaml: systemPrompt$/m);
      const after1 = await org.getAssistant({ path: { assistantId } });
      assert.equal(after1.systemPrompt, 'Be brief and kind.');
      const versions = await org.listAssistantVersions({ path: { assistantId } });
      assert.equal(versions.totalElements, 2);
      assert.equal(versions.data[0]?.summary, 'systemPrompt changed', 'the secrets sent again are the same values');

      const second = await parley(['push', dir], { ...env, ...secretEnv });
      assert.equal(second.code, 0, second.err);
      assert.equal(second.out, 'push: nothing to do\n');
      assert.equal((await org.listAssistantVersions({ path: { assistantId } })).totalElements, 2, 'no new version');
      assert.equal((await org.getAssistant({ path: { assistantId } })).updatedAt, after1.updatedAt);

      // push refuses a resource changed on the service since the pull, naming it; --force overwrites it.
      const current = await org.getAssistant({ path: { assistantId } });
      await org.updateAssistant({ path: { assistantId }, body: { ...current, systemPrompt: 'Changed in the console.' } });
      edit(join(dir, 'assistants/order-desk.yaml'), /^systemPrompt: .*$/m, 'systemPrompt: Changed in the folder.');
      const refused = await parley(['push', dir], { ...env, ...secretEnv });
      assert.equal(refused.code, 1);
      assert.match(refused.err, /push refused, nothing was changed/);
      assert.match(refused.err, /assistants\/order-desk\.yaml: changed on the service since the last pull/);
      assert.equal((await org.getAssistant({ path: { assistantId } })).systemPrompt, 'Changed in the console.');

      const forced = await parley(['push', dir, '--force'], { ...env, ...secretEnv });
      assert.equal(forced.code, 0, forced.err);
      assert.equal((await org.getAssistant({ path: { assistantId } })).systemPrompt, 'Changed in the folder.');
      assert.equal((await parley(['push', dir], { ...env, ...secretEnv })).out, 'push: nothing to do\n', 'the lock follows the push');

      // A new file is created with its references; without --prune nothing is deleted, with it what no file names is.
      writeFileSync(join(dir, 'agents/reminder.yaml'), 'name: Reminder\nsystemPrompt: Remind people.\nstrategy: Warm voice\n');
      rmSync(join(dir, 'agents/outbound.yaml'));
      const diff = await parley(['diff', dir], env);
      assert.match(diff.out, /^\+ agents\/reminder\.yaml: create "Reminder"$/m);
      assert.match(diff.out, /^\? agents\/"Outbound" \([0-9a-f-]{36}\): no file names it; left as it is/m);
      const kept = await parley(['push', dir], { ...env, ...secretEnv });
      assert.equal(kept.code, 0, kept.err);
      let agents = (await org.listAgents()).data;
      assert.deepEqual(agents.map((a) => a.name).sort(), ['Outbound', 'Reminder']);
      const reminder = agents.find((a) => a.name === 'Reminder');
      const strategies = (await org.listLlmGenerationStrategies()).data;
      assert.equal(reminder?.llmAudioContentGenerationStrategyId, strategies[0]?.id);

      const pruned = await parley(['push', dir, '--prune'], { ...env, ...secretEnv });
      assert.equal(pruned.code, 0, pruned.err);
      assert.match(pruned.out, /^deleted agents\/"Outbound"/m);
      agents = (await org.listAgents()).data;
      assert.deepEqual(agents.map((a) => a.name), ['Reminder']);
      assert.equal((await parley(['push', dir, '--prune'], { ...env, ...secretEnv })).out, 'push: nothing to do\n');
      for (const secret of Object.values(SECRETS)) assert.ok(!everything(dir).includes(secret), 'still no secret on disk');

      // A pull after the older of two namesakes is deleted removes its file and keeps the other's name.
      await org.deleteAssistant({ path: { assistantId } });
      const repulled = await parley(['pull', dir], env);
      assert.equal(repulled.code, 0, repulled.err);
      assert.ok(!existsSync(join(dir, 'assistants/order-desk.yaml')));
      assert.match(readFileSync(join(dir, 'assistants/order-desk-2.yaml'), 'utf8'), /^systemPrompt: The other one\.$/m);
    });

    it('usage errors exit 2; an unknown field or a reference to nothing exits 1 naming the file and field, and changes nothing', { timeout: 4 * CLI_TIMEOUT_MS }, async () => {
      assert.equal((await parley(['push'], env)).code, 2);
      assert.equal((await parley(['push', tmpdir(), '--bogus'], env)).code, 2);
      const handWritten = mkdtempSync(join(tmpdir(), 'parley-as-code-broken-'));
      try {
        mkdirSync(join(handWritten, 'assistants'));
        writeFileSync(join(handWritten, 'assistants/typo.yaml'), 'name: Typo\nsytemPrompt: Hello.\n');
        const typo = await parley(['diff', handWritten], env);
        assert.equal(typo.code, 1);
        assert.match(typo.err, /assistants\/typo\.yaml: no field sytemPrompt in assistants\/ \(the fields are name, systemPrompt,/);
        rmSync(join(handWritten, 'assistants/typo.yaml'));
        writeFileSync(join(handWritten, 'assistants/broken.yaml'), 'name: Broken\nstrategy: No such strategy\n');
        const ran = await parley(['push', handWritten], env);
        assert.equal(ran.code, 1);
        assert.match(ran.err, /assistants\/broken\.yaml: strategy "No such strategy" names nothing in strategies\//);
        assert.ok(!(await org.listAssistants()).data.some((a) => a.name === 'Broken'), 'nothing was created');
      } finally {
        rmSync(handWritten, { recursive: true, force: true });
      }
    });
  });
}
