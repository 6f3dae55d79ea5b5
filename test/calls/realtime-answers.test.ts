/** The bookkeeping of what a Realtime model is saying, without a model: which response is whose, what a barge-in cut. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RealtimeAnswers } from '../../src/calls/voice/realtime-answers.ts';

function answers() {
  const spoken: [string, string, boolean][] = [];
  const ended: string[] = [];
  const book = new RealtimeAnswers({ played: (id, heard, interrupted) => void spoken.push([id, heard, interrupted]), end: (itemId) => void ended.push(itemId) });
  return { book, spoken, ended };
}

describe('RealtimeAnswers', () => {
  it('gives the greeting\'s response the say() id, and a server VAD answer its item id; an answer is spoken once its audio has played', () => {
    const { book, spoken, ended } = answers();
    book.expect('u1');
    assert.equal(book.pending, true);
    assert.equal(book.created('resp_1', 'u1'), false);
    const greeting = book.answer('resp_1', 'item_1');
    assert.equal(greeting?.id, 'u1');
    greeting.transcript = 'Hello.';
    assert.deepEqual(book.done('resp_1', 'completed'), []);
    assert.deepEqual(ended, ['item_1']);
    book.played('item_1');
    assert.equal(book.created('resp_2', undefined), false);
    assert.equal(book.answer('resp_2', 'item_2')?.id, 'item_2');
    book.answer('resp_2', 'item_2')!.transcript = 'At nine.';
    book.done('resp_2', 'completed');
    book.played('item_2');
    assert.deepEqual(spoken, [['u1', 'Hello.', false], ['item_2', 'At nine.', false]]);
    assert.equal(book.pending, false);
  });

  it('a barge-in reports the heard part, asks to cancel the running response and drops its late events', () => {
    const { book, spoken } = answers();
    book.created('resp_1', undefined);
    const answer = book.answer('resp_1', 'item_1')!;
    answer.transcript = 'one two three four five six seven eight nine ten';
    answer.receivedMs = 2000;
    const { cancel } = book.interrupt(() => 1000);
    assert.equal(cancel, true);
    assert.deepEqual(spoken, [['item_1', 'one two three four five', true]]);
    assert.equal(book.answer('resp_1', 'item_1'), null, 'audio still arriving for the cut response is dropped');
    assert.equal(book.pending, false);
  });

  it('a greeting cut before its response began is reported unheard, and its response cancelled when it comes', () => {
    const { book, spoken } = answers();
    book.expect('u1');
    assert.deepEqual(book.interrupt(() => 0), { cancel: false });
    assert.deepEqual(spoken, [['u1', '', true]]);
    assert.equal(book.created('resp_1', 'u1'), true);
    assert.equal(book.answer('resp_1', 'item_1'), null);
  });

  it('keeps a response\'s tool calls, even when it was cut, and hands them over when it is done', () => {
    const { book } = answers();
    book.created('resp_1', undefined);
    book.toolCall('resp_1', { id: 'call_1', name: 'lookup', arguments: '{}' });
    book.toolCall('resp_1', { id: 'call_2', name: 'lookup', arguments: '{"a":1}' });
    book.interrupt(() => 0);
    assert.deepEqual(book.done('resp_1', 'cancelled').map((c) => c.id), ['call_1', 'call_2']);
    assert.deepEqual(book.done('resp_1', 'cancelled'), []);
  });
});
