/**
 * The console's voice test call in Chromium, against the real service: Chromium's fake
 * microphone plays espeak-ng speech made here, the service hears it through the Silero VAD and
 * a fake Deepgram (a real WebSocket server on loopback that checks what it gets), the scripted
 * LLM answers, the local eSpeak voice speaks, and the page's player plays it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { setTimeout } from 'node:timers/promises';
import { join } from 'node:path';
import { DEFAULT_CONSOLE_ROOT } from '../../src/http/console.ts';
import { writeWav } from '../../src/voice/audio/wav.ts';
import { ADMIN_TOKEN, buildTestApp, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { startLlmServer, type LlmServer } from '../calls/support/llm-server.ts';
import { startFakeDeepgram, type FakeDeepgram } from '../voice/fakes/deepgram.ts';
import { concatPcm, rms } from '../voice/fakes/audio.ts';
import { energyBounds, similarity } from '../voice/support/compare.ts';
import { silence, speech } from '../voice/support/speech.ts';
import type { Page } from 'playwright-core';
import { captureLooks, openBrowser, type Browser } from './support/browser.ts';
import { SHOTS } from './support/walk.ts';

const DG_KEY = 'dg-console-key-5a1c90e7';
const RATE = 16000;
const QUESTION = 'When do you open tomorrow?';
const ANSWER = 'We open at nine.';

/** The samples of a clean signal between its energy bounds (where the speech is). */
function speechPart(signal: Int16Array): Int16Array {
  const { start, end } = energyBounds(signal, RATE);
  return signal.subarray(start, end);
}

async function signIn(page: Page): Promise<void> {
  await page.goto('/console/signin');
  await page.getByLabel('API token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByLabel('Vendor').selectOption({ label: 'Acme' });
  await page.getByLabel('Organization').selectOption({ label: 'Acme main' });
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  await page.getByRole('img', { name: 'Calls per day by outcome' }).waitFor(); // its request is answered: nothing in flight
}

/** The assistant's page, reached through the app's links (a reload would cut requests in flight). */
async function openAssistant(page: Page): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Assistants' }).click();
  await page.getByRole('link', { name: 'Front desk' }).click();
  await page.getByRole('heading', { name: 'Front desk' }).waitFor();
}

for (const [index, dialect] of DIALECTS.entries()) {
  describe(`a voice test call from the console, against the real service (${dialect})`, () => {
    let t: TestApp;
    let tenant: Tenant;
    let llm: LlmServer;
    let stt: FakeDeepgram;
    let b: Browser;
    let dir: string;
    let question: Int16Array;
    let base: string;
    before(async () => {
      assert.ok(existsSync(join(DEFAULT_CONSOLE_ROOT, 'index.html')), 'the console is not built: run `npm run build:console` (scripts/test.sh does)');
      dir = mkdtempSync(join(tmpdir(), 'parley-voice-console-'));
      // Silence first, so the greeting is over before the caller speaks; silence after, so the VAD hears the end.
      question = await speech(QUESTION, RATE);
      const wav = join(dir, 'question.wav');
      writeFileSync(wav, writeWav(concatPcm([silence(2.5), question, silence(3)]), RATE));
      [llm, stt] = await Promise.all([startLlmServer(), startFakeDeepgram({ apiKey: DG_KEY, model: 'nova-3', language: 'en' })]);
      llm.respond = () => ({ text: ANSWER });
      stt.setTranscript(QUESTION);
      t = await buildTestApp(dialect, { PARLEY_EGRESS_ALLOW: '127.0.0.0/8', OPENAI_BASE_URL: llm.baseUrl, OPENAI_API_KEY: 'test-llm-key' });
      tenant = await createTenant(t);
      const strategy = await t.call('POST', `${tenant.orgPath}/llm-generation-strategies`, { body: {
        name: 'Local voice', type: 'text_to_speech',
        parameters: { model: 'test-model', voice: { provider: 'espeak' }, vad: { stopDuration: 0.6 }, transcriber: { provider: 'deepgram', model: 'nova-3', language: 'en' } },
      } });
      assert.equal(strategy.statusCode, 201, strategy.body);
      const created = await t.call('POST', `${tenant.orgPath}/assistants`, { body: {
        name: 'Front desk', systemPrompt: 'You answer questions about opening hours.', systemPromptGreeting: 'Hello.',
        llmAudioContentGenerationStrategyId: strategy.json().data.id,
      } });
      assert.equal(created.statusCode, 201, created.body);
      base = await t.app.listen({ port: 0, host: '127.0.0.1' });
      b = await openBrowser(base, [
        '--use-fake-ui-for-media-stream', // grants the microphone without a prompt
        '--use-fake-device-for-media-stream',
        `--use-file-for-fake-audio-capture=${wav}%noloop`, // the file once, then silence
        '--autoplay-policy=no-user-gesture-required',
      ]);
    });
    after(async () => {
      await b?.close();
      await t?.close();
      await Promise.all([llm?.close(), stt?.close()]);
      rmSync(dir, { recursive: true, force: true });
    });

    it('talks to the assistant: the STT hears the microphone, the answer is on the timeline and played, hang-up ends the call', { timeout: 90_000 }, async () => {
      try {
        await talk();
      } catch (error) {
        // What the page showed and what went wrong in it say more than a timeout does.
        const shown = await b.page.locator('main').innerText().catch(() => '(no page)');
        throw new Error(`${(error as Error).message}\npage problems: ${JSON.stringify(b.problems)}\nSTT problems: ${JSON.stringify(stt.problems)}\npage: ${shown}`, { cause: error });
      }
    });

    it('says so when the microphone is refused, and starts no call', { timeout: 60_000 }, async () => {
      // A second Chromium without the flag that grants the microphone: headless, the prompt is denied.
      const callsBefore = (await t.call('GET', `${tenant.orgPath}/calls`)).json().totalElements;
      const denied = await openBrowser(base, ['--use-fake-device-for-media-stream']);
      try {
        const { page } = denied;
        await signIn(page);
        await openAssistant(page);
        await page.getByRole('button', { name: 'Talk', exact: true }).click();
        await page.getByRole('alert').getByText(/Microphone permission was denied/).waitFor();
        await page.getByRole('button', { name: 'Talk', exact: true }).waitFor();
        assert.deepEqual(denied.problems, []);
      } finally {
        await denied.close();
      }
      assert.equal((await t.call('GET', `${tenant.orgPath}/calls`)).json().totalElements, callsBefore, 'no call is started without the microphone');
    });

    async function talk(): Promise<void> {
      const { page } = b;
      await signIn(page);

      await addDeepgramCredential(page);

      await openAssistant(page);
      // Off: the microphone's samples go unchanged, so what the STT got can be compared with the file.
      // (On, Chromium's echo canceller and high-pass reshape them: NCC about 0.78 measured.)
      await page.getByLabel('Echo cancellation and noise suppression').uncheck();
      await page.getByRole('button', { name: 'Talk', exact: true }).click();
      const timeline = page.getByRole('list', { name: 'Call timeline' });
      await timeline.getByText('Call started').waitFor();
      await timeline.getByText('Assistant: Hello.').waitFor({ timeout: 30_000 });
      await timeline.getByText(`You: ${QUESTION}`).waitFor({ timeout: 30_000 });
      await timeline.getByText(`Assistant: ${ANSWER}`).waitFor({ timeout: 30_000 });

      // What the fake Deepgram got: the microphone's speech, at least most of it, and not silence.
      const heard = stt.receivedAudio();
      const sent = speechPart(question);
      const got = speechPart(heard);
      assert.ok(heard.length >= 0.8 * question.length, `the STT got ${heard.length} samples of a ${question.length}-sample question`);
      assert.ok(rms(got) > 0.3 * rms(sent), `speech level ${rms(got)} against ${rms(sent)}`);
      // Both sides' speech is cut at its energy bounds; the lag left is a few ms at most.
      const match = similarity(sent, got, 1600);
      assert.ok(match.ncc >= 0.9, `NCC ${match.ncc} at lag ${match.lag}`);
      assert.ok(Math.abs(got.length / sent.length - 1) <= 0.05, `speech of ${got.length} samples, ${sent.length} sent`);

      // The page's player played the greeting and the answer (eSpeak says them in about 1.5 s).
      const speaker = page.locator('[data-played-samples]');
      const playedSeconds = async () => Number(await speaker.getAttribute('data-played-samples')) / Number(await speaker.getAttribute('data-played-rate'));
      // Polled from here: the page's CSP refuses the string evaluation waitForFunction would use.
      for (const until = Date.now() + 20_000; !((await playedSeconds()) >= 1.2);) {
        if (Date.now() > until) throw new Error(`the page played ${await playedSeconds()} s`);
        await setTimeout(100);
      }

      if (index === 0) assert.deepEqual(await captureLooks(page, SHOTS, 'voice-call'), []);
      await page.getByRole('button', { name: 'Hang up' }).click();
      await timeline.getByText('Call ended (client_ended)').waitFor();
      await page.getByRole('link', { name: 'Open the call record' }).waitFor();

      const callId = (await page.getByRole('link', { name: 'Open the call record' }).getAttribute('href'))?.split('/').at(-1);
      const call = (await t.call('GET', `${tenant.orgPath}/calls/${callId}`)).json().data;
      assert.deepEqual(call.audio, { encoding: 'pcm_s16le', sampleRate: RATE });
      assert.deepEqual(call.providers, {
        llm: 'openai', tts: 'espeak', stt: 'deepgram',
        turns: [{ turn: 0, tts: 'espeak' }, { turn: 1, stt: 'deepgram', llm: 'openai', tts: 'espeak' }],
      });
      assert.deepEqual(call.transcript.map((e: { role: string; text: string }) => [e.role, e.text]), [['assistant', 'Hello.'], ['user', QUESTION], ['assistant', ANSWER]]);
      assert.equal(stt.requests[0]?.authorization, `Token ${DG_KEY}`);
      assert.deepEqual(stt.problems, []);
      await deleteCredential(page);
      assert.deepEqual(b.problems, [], 'no console error, failed request or unexpected error answer');
      assert.deepEqual(b.unmet(), [], 'every deliberate API error happened');
    }

    /** The provider credentials page: a field error from the API at its field, then the key stored and shown masked. */
    async function addDeepgramCredential(page: Page): Promise<void> {
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Providers' }).click();
      await page.getByText('No provider credentials yet.').waitFor();
      const form = page.getByRole('form', { name: 'New provider credential' });
      await form.getByLabel('Provider').selectOption('deepgram');
      await form.getByLabel('API key').fill(DG_KEY);
      // A private address the egress policy does not allow: refused by the API, shown under Base URL.
      await form.getByLabel('Base URL').fill('ws://10.20.30.40');
      b.expectFailure(/\/provider-credentials$/, 400);
      await form.getByRole('button', { name: 'Add credential' }).click();
      const baseUrl = form.getByLabel('Base URL');
      await form.locator('input[aria-invalid="true"][type="url"]').waitFor();
      const describedBy = (await baseUrl.getAttribute('aria-describedby')) ?? '';
      assert.match((await page.locator(`[id="${describedBy.split(' ').at(-1)}"]`).textContent()) ?? '', /egress/, 'the baseUrl error is shown at its field');
      if (index === 0) assert.deepEqual(await captureLooks(page, SHOTS, 'provider-credentials-field-error'), []);
      await baseUrl.fill(stt.url);
      await form.getByRole('button', { name: 'Add credential' }).click();
      const row = page.getByRole('row', { name: /deepgram/ });
      await row.getByText('********').waitFor();
      assert.ok(!(await page.locator('main').innerText()).includes(DG_KEY), 'the key is never shown');
      const [stored] = (await t.call('GET', `${tenant.orgPath}/provider-credentials`)).json().data;
      assert.deepEqual([stored.provider, stored.baseUrl, stored.apiKey], ['deepgram', stt.url, '********']);

      // Replacing: a new base URL needs the key again; the API says so at the key's field.
      await row.getByRole('button', { name: 'Replace deepgram' }).click();
      const replace = page.getByRole('form', { name: 'Replace deepgram credential' });
      await replace.getByLabel('Base URL').fill(`${stt.url}/other`);
      b.expectFailure(/\/provider-credentials\/[\da-f-]+$/, 400);
      await replace.getByRole('button', { name: 'Save' }).click();
      await replace.locator('input[aria-invalid="true"][type="password"]').waitFor();
      await replace.getByRole('button', { name: 'Cancel' }).click();
      if (index === 0) assert.deepEqual(await captureLooks(page, SHOTS, 'provider-credentials'), []);
    }

    async function deleteCredential(page: Page): Promise<void> {
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Providers' }).click();
      await page.getByRole('button', { name: 'Delete deepgram' }).click();
      await page.getByRole('button', { name: 'Delete deepgram for good' }).click();
      await page.getByText('No provider credentials yet.').waitFor();
      assert.equal((await t.call('GET', `${tenant.orgPath}/provider-credentials`)).json().totalElements, 0);
    }
  });
}
