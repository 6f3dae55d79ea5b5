// The cool-down of failed providers: per organization, over the injected clock, bounded in memory.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { COOL_DOWN_MS, ProviderHealth } from '../../src/calls/fallbacks/health.ts';
import { ProviderLedger } from '../../src/calls/fallbacks/ledger.ts';

const candidates = [{ provider: 'anthropic' }, { provider: 'openai_compatible' }, { provider: 'openai' }];

describe('provider health and the ledger of a call', () => {
  it('a failed provider goes last for the cool-down, for its organization only, and first again after it or a success', () => {
    const clock = new ManualClock('2026-01-01T00:00:00Z');
    const health = new ProviderHealth(clock);
    health.failed('org-a', 'llm', 'anthropic');
    assert.deepEqual(health.order('org-a', 'llm', candidates).map((c) => c.provider), ['openai_compatible', 'openai', 'anthropic']);
    assert.deepEqual(health.order('org-b', 'llm', candidates).map((c) => c.provider), ['anthropic', 'openai_compatible', 'openai'], 'another organization is not steered');
    assert.equal(health.cooling('org-a', 'tts', 'anthropic'), false, 'per kind');
    clock.advance(COOL_DOWN_MS - 1);
    assert.equal(health.cooling('org-a', 'llm', 'anthropic'), true);
    clock.advance(1);
    assert.equal(health.cooling('org-a', 'llm', 'anthropic'), false, 'probed again after the cool-down');
    health.failed('org-a', 'llm', 'openai');
    health.succeeded('org-a', 'llm', 'openai');
    assert.equal(health.cooling('org-a', 'llm', 'openai'), false);
  });

  it('remembers a bounded number of failures: expired ones go first, then the oldest', () => {
    const clock = new ManualClock('2026-01-01T00:00:00Z');
    const health = new ProviderHealth(clock);
    for (let i = 0; i < 10_000; i++) health.failed(`org-${i}`, 'llm', 'anthropic');
    health.failed('org-new', 'llm', 'anthropic');
    assert.equal(health.cooling('org-new', 'llm', 'anthropic'), true);
    assert.equal(health.cooling('org-0', 'llm', 'anthropic'), false, 'the oldest was forgotten');
    assert.equal(health.cooling('org-9999', 'llm', 'anthropic'), true);
  });

  it('the ledger: turn 0 is the greeting, a transcription and the rounds answering its words belong to the turn taken for them', () => {
    const ledger = new ProviderLedger();
    ledger.served('tts', 'elevenlabs');
    ledger.failed('stt', 'deepgram');
    ledger.served('stt', 'openai');
    // A speculative answer to words the caller then went on from: it leaves no trace.
    ledger.served('llm', 'anthropic', 'I would like');
    // One begun on the words the turn is then taken for: it is that turn's.
    ledger.failed('llm', 'anthropic', 'I would like a table');
    ledger.served('llm', 'openai_compatible', 'I would like a table');
    ledger.nextTurn('I would like a table');
    ledger.served('tts', 'elevenlabs');
    ledger.nextTurn('For two');
    ledger.served('llm', 'anthropic', 'For two');
    assert.deepEqual(ledger.snapshot(), [
      { turn: 0, tts: 'elevenlabs' },
      { turn: 1, stt: 'openai', llm: 'openai_compatible', tts: 'elevenlabs', failed: ['stt:deepgram', 'llm:anthropic'] },
      { turn: 2, llm: 'anthropic' },
    ]);
  });
});
