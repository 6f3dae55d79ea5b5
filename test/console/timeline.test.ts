// The test call's timeline: what each frame of the call WebSocket puts on it (console/src/assistant/timeline.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyFrame, EMPTY_TIMELINE, type ServerFrame, type Timeline } from '../../console/src/assistant/timeline.ts';

const play = (frames: ServerFrame[]): Timeline => frames.reduce((t, frame, i) => applyFrame(t, frame, i * 100), EMPTY_TIMELINE);

describe('the test call timeline', () => {
  it('shows the caller\'s interim transcript until the final one, then one entry', () => {
    const interim = play([{ type: 'call_started', callId: 'c' }, { type: 'speech_started' }, { type: 'user_transcript', text: 'When do', final: false }]);
    assert.equal(interim.partials.user, 'When do');
    assert.deepEqual(interim.entries.map((e) => e.kind), ['system', 'system']);
    const final = applyFrame(interim, { type: 'user_transcript', text: 'When do you open?', final: true }, 300);
    assert.equal(final.partials.user, '');
    assert.deepEqual(final.entries.at(-1), { kind: 'user', text: 'When do you open?', at: 300 });
  });

  it('streams the answer, and an interruption drops what was still streaming', () => {
    const streaming = play([{ type: 'assistant_delta', text: 'We open ' }, { type: 'assistant_delta', text: 'at nine' }]);
    assert.equal(streaming.partials.assistant, 'We open at nine');
    const cut = applyFrame(streaming, { type: 'interrupted', heard: 'We open' }, 200);
    assert.equal(cut.partials.assistant, '');
    assert.deepEqual(cut.entries.at(-1), { kind: 'system', text: 'Interrupted; you heard: “We open”', at: 200 });
  });

  it('puts tool calls, their results and the end on the timeline; turn_done changes nothing', () => {
    const t = play([
      { type: 'tool_call', id: '1', name: 'lookup_order', arguments: '{}' },
      { type: 'tool_waiting', names: ['lookup_order'], elapsedMs: 1500 },
      { type: 'tool_result', id: '1', name: 'lookup_order', ok: true, statusCode: 200, latencyMs: 1600 },
      { type: 'turn_done' },
      { type: 'call_ended', reason: 'client_ended' },
    ]);
    assert.deepEqual(t.entries.map((e) => (e.kind === 'system' ? e.text : e.kind)), [
      'tool_call', 'Waiting for lookup_order (1.5 s)', 'tool_result', 'Call ended (client_ended)',
    ]);
  });
});

describe('the test call timeline: turn-taking frames', { timeout: 10_000 }, () => {
  it('shows a pause and a resume, and a frame it does not know changes nothing', () => {
    const t = play([{ type: 'turn_paused' }, { type: 'turn_resumed' }]);
    assert.deepEqual(t.entries.map((e) => e.kind === 'system' && e.text), ['You spoke over the assistant: paused', 'Not an interruption: the assistant goes on']);
    const unknown = applyFrame(t, { type: 'something_newer' } as unknown as ServerFrame, 500);
    assert.equal(unknown, t);
  });
});
