import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readCompleteness } from '../../src/calls/turns/completeness.ts';
import { DEFAULT_BACKCHANNELS, turnProblems, turnSettings } from '../../src/calls/turns/settings.ts';
import { Backchannels, wordsOf } from '../../src/calls/turns/words.ts';
import { turnLatency } from '../../src/calls/turns/latency.ts';

describe('turn rules: how a transcript reads at a pause', { timeout: 10_000 }, () => {
  it('reads whole sentences and questions as complete', () => {
    for (const text of ['When do you open tomorrow?', 'I would like to book a table for four.', 'That is all, thank you.', 'Yes please', 'my name is Anna']) {
      assert.ok(readCompleteness(text).complete, `${text}: ${readCompleteness(text).reason}`);
    }
  });

  it('reads a caller mid-thought as unfinished: conjunctions, articles, prepositions, fillers, auxiliaries', () => {
    for (const text of ['I want to change my', 'and', 'I need it delivered to the', 'Can I get a pizza with', 'I was thinking um', 'uh', 'so', 'The problem is', 'I want', 'I would like to order', 'can I get']) {
      assert.ok(!readCompleteness(text).complete, text);
    }
  });

  it('reads a number or a spelling being dictated as unfinished, and a short number as an answer', () => {
    for (const text of ['my number is 555', 'it is 0 1 7 6', 'five five five', 'order number four two seven', 'my email is j o h n', 'john at example dot']) {
      assert.ok(!readCompleteness(text).complete, text);
    }
    for (const text of ['The order number is 42', 'My code is 8', 'My code is 8 ZX', 'The booking reference is 7 91', 'my pin is 4.', 'Call me on 030 7788']) {
      assert.ok(!readCompleteness(text).complete, `${text}: a dictation cue before the digits`);
    }
    assert.ok(readCompleteness('table for 4').complete);
    assert.ok(readCompleteness('I am 42').complete);
  });

  it('reads a punctuating STT: no end mark after punctuation elsewhere is unfinished; trailing commas and ellipses are too', () => {
    assert.ok(!readCompleteness('Well, I think').complete);
    assert.ok(readCompleteness('Well, I think so.').complete);
    assert.ok(readCompleteness('What are you looking at?').complete, 'the STT ended it: a preposition may end a question');
    assert.ok(!readCompleteness('My number is 555.').complete, 'a dictated group, whatever the STT put after it');
    assert.ok(!readCompleteness('I wanted to ask...').complete);
    assert.ok(!readCompleteness('My order,').complete);
    assert.ok(!readCompleteness('').complete, 'no words: nothing to answer yet');
  });
});

describe('turn rules: backchannels', { timeout: 10_000 }, () => {
  const backchannels = new Backchannels(DEFAULT_BACKCHANNELS);

  it('matches whole utterances of backchannel phrases, ignoring case and punctuation', () => {
    for (const text of ['yeah', 'Yeah.', 'OK!', 'uh-huh', 'Uh huh.', 'mm-hmm', 'I see.', 'Got it', 'right, right', 'okay, got it', 'Yes.']) {
      assert.ok(backchannels.matches(text), text);
    }
  });

  it('does not match an utterance with anything more in it', () => {
    for (const text of ['yeah, but wait', 'no', 'wait', 'stop', 'yes I have a question', 'okay so what about Sunday', '', 'yeah yeah yeah yeah']) {
      assert.ok(!backchannels.matches(text), text);
    }
  });

  it('tells whether words so far may still become a backchannel', () => {
    assert.ok(backchannels.couldBe('got'));
    assert.ok(backchannels.couldBe('I'));
    assert.ok(!backchannels.couldBe('wait'));
    assert.ok(!backchannels.couldBe('yeah but'));
  });

  it('takes the strategy\'s own phrases', () => {
    const german = new Backchannels(['ja', 'genau', 'aha']);
    assert.ok(german.matches('Ja, genau.'));
    assert.ok(!german.matches('yeah'));
  });

  it('reads words the way the rules compare them', () => {
    assert.deepEqual(wordsOf('  Uh-huh... I don’t KNOW!  '), ['uh-huh', "i", "don't", 'know']);
  });
});

describe('turn settings', { timeout: 10_000 }, () => {
  it('defaults to smart endpointing with the documented values', () => {
    assert.deepEqual({ ...turnSettings(), backchannels: undefined }, {
      endpointing: 'smart', minSilence: 0.25, maxSilence: 1.6, backchannels: undefined, interruptionMinWords: 2, interruptionMinDuration: 0.5, resumeAfterFalseInterruption: true,
    });
    assert.equal(turnSettings({ endpointing: 'vad', minSilence: 0.3 }).minSilence, 0.3);
  });

  it('names maxSilence when it is below minSilence', () => {
    assert.deepEqual(turnProblems({ minSilence: 1, maxSilence: 0.5 }).map((p) => p.path), ['parameters.turn.maxSilence']);
    assert.deepEqual(turnProblems({ maxSilence: 0.3 }), [], 'the default minSilence is below it');
    assert.deepEqual(turnProblems(undefined), []);
  });
});

describe('turn latency parts', { timeout: 10_000 }, () => {
  it('follow each other and add up to the total, rounded', () => {
    const parts = turnLatency({ lastSpeechAt: 1000.4, endedAt: 1250.7, firstTokenAt: 1500.2, firstAudioAt: 1700.6 });
    assert.deepEqual(parts, { endpointingMs: 250, llmFirstTokenMs: 250, ttsFirstAudioMs: 200, totalMs: 700 });
  });

  it('a first token before the turn was confirmed (a speculative answer) counts 0 for the LLM', () => {
    const parts = turnLatency({ lastSpeechAt: 0, endedAt: 600, firstTokenAt: 400, firstAudioAt: 750 });
    assert.deepEqual(parts, { endpointingMs: 600, llmFirstTokenMs: 0, ttsFirstAudioMs: 150, totalMs: 750 });
    assert.equal(parts.endpointingMs + parts.llmFirstTokenMs + parts.ttsFirstAudioMs, parts.totalMs);
  });
});
