/**
 * A recorded and analysed call in the console, against the real service: the call page plays the
 * recording (fetched with the token, played from a blob: nothing in a URL), draws both channels,
 * seeks when a transcript line is clicked, and shows the summary, the data as a table and the
 * verdict; the editor shows and saves the recording and analysis settings. axe-core on both.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Page } from 'playwright-core';
import { DEFAULT_CONSOLE_ROOT } from '../../src/http/console.ts';
import { ADMIN_TOKEN, buildTestApp, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { until } from '../helpers/until.ts';
import { connect, talk } from '../calls/support/client.ts';
import { startLlmServer, type LlmServer } from '../calls/support/llm-server.ts';
import { startFakeDeepgram, type FakeDeepgram } from '../voice/fakes/deepgram.ts';
import { concatPcm } from '../voice/fakes/audio.ts';
import { silence, speech } from '../voice/support/speech.ts';
import { axeViolations, captureLooks, openBrowser, type Browser } from './support/browser.ts';
import { SHOTS } from './support/walk.ts';

const DG_KEY = 'dg-console-key-7b2d11f0';
const QUESTION = 'Can I come on Monday?';
const ANSWER = 'Yes, Monday at ten.';

for (const [index, dialect] of DIALECTS.entries()) {
  describe(`a recorded, analysed call in the console (${dialect})`, () => {
    let t: TestApp;
    let tenant: Tenant;
    let llm: LlmServer;
    let stt: FakeDeepgram;
    let b: Browser;
    let dir: string;
    let callId: string;
    let assistantId: string;

    before(async () => {
      assert.ok(existsSync(join(DEFAULT_CONSOLE_ROOT, 'index.html')), 'the console is not built: run `npm run build:console` (scripts/test.sh does)');
      dir = mkdtempSync(join(tmpdir(), 'parley-console-recording-'));
      [llm, stt] = await Promise.all([startLlmServer(), startFakeDeepgram({ apiKey: DG_KEY, model: 'nova-3', language: 'en' })]);
      llm.respond = (body) => {
        const last = String(body.messages.at(-1)?.content ?? '');
        if (last.includes('JSON Schema')) return { text: '{"day": "Monday", "time": "10:00"}' };
        if (last.includes('Answer with one word')) return { text: 'true' };
        if (String(body.messages[0]?.content).startsWith('You analyse')) return { text: 'The caller booked Monday at ten.' };
        return { text: ANSWER };
      };
      stt.setTranscript(QUESTION);
      t = await buildTestApp(dialect, {
        PARLEY_EGRESS_ALLOW: '127.0.0.0/8', OPENAI_BASE_URL: llm.baseUrl, OPENAI_API_KEY: 'test-llm-key', DEEPGRAM_API_KEY: DG_KEY, DEEPGRAM_BASE_URL: stt.url,
        PARLEY_RECORDINGS_DIR: dir,
      });
      tenant = await createTenant(t);
      const strategy = await t.call('POST', `${tenant.orgPath}/llm-generation-strategies`, { body: {
        name: 'Local voice', type: 'text_to_speech',
        parameters: { model: 'test-model', voice: { provider: 'espeak' }, vad: { stopDuration: 0.6 }, transcriber: { provider: 'deepgram', model: 'nova-3', language: 'en' } },
      } });
      const created = await t.call('POST', `${tenant.orgPath}/assistants`, { body: {
        name: 'Bookings', systemPromptGreeting: 'Hello.', llmAudioContentGenerationStrategyId: strategy.json().data.id, recording: { enabled: true },
        analysis: { structuredData: { schema: { type: 'object', properties: { day: { type: 'string' }, time: { type: 'string' } } } }, successEvaluation: { rubric: 'pass_fail' }, minTurns: 1 },
      } });
      assert.equal(created.statusCode, 201, created.body);
      assistantId = created.json().data.id;
      const base = await t.app.listen({ port: 0, host: '127.0.0.1' });

      // The call, from a WebSocket client: the greeting, a question, the answer.
      const started = await t.call('POST', `${tenant.orgPath}/assistants/${assistantId}/calls`, { body: { audio: { encoding: 'pcm_s16le', sampleRate: 16000 } } });
      callId = started.json().data.id;
      const client = await connect(started.json().data.websocketUrl.replace(/^ws:\/\/[^/]+/, base.replace(/^http/, 'ws')));
      await client.next((f) => f.type === 'assistant_message' && f.text === 'Hello.', 20_000);
      await sleep(1_500);
      await talk(client, concatPcm([await speech(QUESTION), silence(1.2)]));
      await client.next((f) => f.type === 'assistant_message' && f.text === ANSWER, 20_000);
      await sleep(2_000);
      client.send({ type: 'end' });
      await client.closed;
      await until('the recording and the analysis', async () => {
        await t.app.runner.tick();
        await t.app.runner.idle();
        return (await t.call('GET', `${tenant.orgPath}/calls/${callId}`)).json().data;
      }, (c) => c.recording?.status === 'ready' && c.conclusion?.analysisStatus === 'done', 30_000);
      b = await openBrowser(base, ['--autoplay-policy=no-user-gesture-required']);
    });
    after(async () => {
      await b?.close();
      await t?.close();
      await Promise.all([llm?.close(), stt?.close()]);
      rmSync(dir, { recursive: true, force: true });
    });

    /** The page's problems, less the media element's own reads of the blob that a seek aborts (ERR_ABORTED on a blob: URL). */
    const problems = () => b.problems.filter((p) => !/^request failed: GET blob:\S+ net::ERR_ABORTED$/.test(p));

    async function signIn(page: Page): Promise<void> {
      await page.goto('/console/signin');
      await page.getByLabel('API token').fill(ADMIN_TOKEN);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByLabel('Vendor').selectOption({ label: 'Acme' });
      await page.getByLabel('Organization').selectOption({ label: 'Acme main' });
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      await page.getByRole('img', { name: 'Calls per day by outcome' }).waitFor();
    }

    it('plays the recording from a blob, shows both channels, seeks from the transcript, and shows the analysis', { timeout: 90_000 }, async () => {
      const { page } = b;
      await signIn(page);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Calls' }).click();
      await page.getByRole('table').getByRole('link').first().click(); // the only call
      await page.getByRole('heading', { name: `Call ${callId.slice(0, 8)}` }).waitFor();
      await page.getByRole('heading', { name: 'Recording' }).waitFor();
      await page.getByRole('img', { name: /Both channels of the recording/ }).waitFor();
      const audio = page.getByLabel('Call recording');
      const src = (await audio.getAttribute('src')) ?? '';
      assert.match(src, /^blob:/, 'played from memory');
      assert.ok(!src.includes(ADMIN_TOKEN));

      const call = (await t.call('GET', `${tenant.orgPath}/calls/${callId}`)).json().data;
      const answer = call.transcript.find((e: any) => e.role === 'assistant' && e.text === ANSWER);
      await page.getByRole('button', { name: `Assistant: ${ANSWER}` }).click();
      const position = async () => Number(await page.evaluate('document.querySelector("audio").currentTime'));
      for (const deadline = Date.now() + 10_000; Math.abs((await position()) - answer.startMs / 1000) > 0.5;) {
        if (Date.now() > deadline) throw new Error(`the player is at ${await position()} s, the answer starts at ${answer.startMs} ms`);
        await sleep(100);
      }

      const analysis = page.getByRole('region', { name: 'Analysis' });
      await analysis.getByText('The caller booked Monday at ten.').waitFor();
      await analysis.getByRole('table', { name: 'Extracted data' }).getByRole('row', { name: 'day Monday' }).waitFor();
      await analysis.getByText('Success', { exact: true }).waitFor();
      if (index === 0) assert.deepEqual(await captureLooks(page, SHOTS, 'call-recording'), []);
      else assert.deepEqual(await axeViolations(page), []);
      assert.deepEqual(problems(), [], 'no console error (a CSP refusal among them), failed request or unexpected error answer');
    });

    it('the editor shows the recording and analysis settings and saves a change', { timeout: 60_000 }, async () => {
      const { page } = b;
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Assistants' }).click();
      await page.getByRole('link', { name: 'Bookings' }).click();
      await page.getByRole('heading', { name: 'After the call' }).waitFor();
      assert.ok(await page.getByLabel('Record calls').isChecked());
      assert.ok(await page.getByLabel('Analyse calls').isChecked());
      assert.equal(await page.getByLabel('Success rubric').inputValue(), 'pass_fail');
      await page.getByLabel('Success rubric').selectOption('score_1_10');
      await page.getByLabel('Data schema (JSON Schema)').fill('{"type": "object", "properties": {"day": {"type": "weekday"}}}');
      b.expectFailure(/\/assistants\/[^/]+$/, 400);
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByText(/properties\.day\.type/).first().waitFor();
      await page.getByLabel('Data schema (JSON Schema)').fill('{"type": "object", "properties": {"day": {"type": "string"}}}');
      await page.getByLabel('Record calls').uncheck();
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByText('Saved.').waitFor();
      const saved = (await t.call('GET', `${tenant.orgPath}/assistants/${assistantId}`)).json().data;
      assert.deepEqual(saved.recording, { enabled: false });
      assert.equal(saved.analysis.successEvaluation.rubric, 'score_1_10');
      assert.deepEqual(saved.analysis.structuredData.schema, { type: 'object', properties: { day: { type: 'string' } } });
      assert.deepEqual(await axeViolations(page), []);
      assert.deepEqual(problems(), []);
      assert.deepEqual(b.unmet(), []);
    });
  });
}
