import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { voicePlanFor } from '../../src/calls/voice/plan-for.ts';
import type { ResolveAccess } from '../../src/calls/providers/access.ts';

const AUDIO = { encoding: 'pcm_s16le', sampleRate: 16000 };
/** An organization whose only keys are those named. */
const having = (...providers: string[]): ResolveAccess => async (_org, provider) =>
  (providers.includes(provider) ? { apiKey: `${provider}-key`, baseUrl: `https://${provider}.example` } : null);

describe('the transcriber of a strategy that names none', () => {
  it('is a named Whisper server first, then openai when the organization can use it, else deepgram', { timeout: 5_000 }, async () => {
    const all = await voicePlanFor(null, AUDIO, 'org', having('whisper', 'openai', 'deepgram'));
    assert.equal(all.kind === 'pipeline' && all.stt.provider, 'whisper');
    const both = await voicePlanFor(null, AUDIO, 'org', having('openai', 'deepgram'));
    assert.equal(both.kind === 'pipeline' && both.stt.provider, 'openai');
    const deepgramOnly = await voicePlanFor(null, AUDIO, 'org', having('deepgram'));
    assert.equal(deepgramOnly.kind === 'pipeline' && deepgramOnly.stt.provider, 'deepgram');
  });

  it('with neither, the plan is unusable and says what would make the call heard', { timeout: 5_000 }, async () => {
    const none = await voicePlanFor({ type: 'text_to_speech', parameters: {} }, AUDIO, 'org', having());
    assert.equal(none.kind, 'unusable');
    assert.equal(none.kind === 'unusable' && none.failure.source, 'stt');
    assert.match(none.kind === 'unusable' ? none.failure.message : '', /DEEPGRAM_API_KEY \(a Deepgram key\), OPENAI_API_KEY \(an OpenAI key\), or WHISPER_BASE_URL \(a self-hosted Whisper-compatible server's base URL, no key needed\)/);
  });

  it('a Whisper key without a base URL names no server, and is passed over', { timeout: 5_000 }, async () => {
    const keyOnly: ResolveAccess = async (_org, provider) => (provider === 'whisper' ? { apiKey: 'k', baseUrl: '' } : provider === 'deepgram' ? { apiKey: 'd', baseUrl: 'wss://dg.example' } : null);
    const plan = await voicePlanFor(null, AUDIO, 'org', keyOnly);
    assert.equal(plan.kind === 'pipeline' && plan.stt.provider, 'deepgram');
  });

  it('a strategy that names one keeps it, and its missing key still says which', { timeout: 5_000 }, async () => {
    const named = await voicePlanFor({ type: 'text_to_speech', parameters: { transcriber: { provider: 'deepgram' } } }, AUDIO, 'org', having('openai'));
    assert.equal(named.kind === 'unusable' && named.failure.source, 'stt:deepgram');
  });
});
