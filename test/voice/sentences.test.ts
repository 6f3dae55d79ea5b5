import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SentenceSplitter } from '../../src/voice/sentences.ts';

/** Feeds `text` in pieces of `size` characters, as an LLM stream would, and returns every release. */
function split(text: string, size = 3, options = {}): string[][] {
  const splitter = new SentenceSplitter(options);
  const releases: string[][] = [];
  for (let i = 0; i < text.length; i += size) {
    const out = splitter.push(text.slice(i, i + size));
    if (out.length > 0) releases.push(out);
  }
  releases.push(splitter.flush());
  return releases;
}

const sentences = (text: string, size?: number, options?: object) => split(text, size, options).flat();

describe('SentenceSplitter', () => {
  it('releases each sentence as soon as the space after its end arrives', () => {
    const splitter = new SentenceSplitter();
    assert.deepEqual(splitter.push('Hello there.'), []);
    assert.deepEqual(splitter.push(' How'), ['Hello there.']);
    assert.deepEqual(splitter.push(' are you? Fine!'), ['How are you?']);
    assert.deepEqual(splitter.flush(), ['Fine!']);
  });

  it('ends sentences at ! ? … and line breaks, keeping closing quotes', () => {
    assert.deepEqual(sentences('Wait… Really?! He said "yes." Then\nbullet one\nbullet two'), [
      'Wait…', 'Really?!', 'He said "yes."', 'Then', 'bullet one', 'bullet two',
    ]);
  });

  it('does not split after abbreviations, initials, list numbers, decimals or inside URLs', () => {
    const text = 'See Dr. Smith, e.g. at 3.5 p.m. today. J. R. R. Tolkien wrote it. Visit https://example.com/a.b?x=1.2 now.\n1. Open the app. 2. Tap go.';
    assert.deepEqual(sentences(text, 2, { firstClauseMinWords: 0 }), [
      'See Dr. Smith, e.g. at 3.5 p.m. today.',
      'J. R. R. Tolkien wrote it.',
      'Visit https://example.com/a.b?x=1.2 now.',
      '1. Open the app.',
      '2. Tap go.',
    ]);
  });

  it('does not split a number that a later delta continues ("3." then "5")', () => {
    const splitter = new SentenceSplitter();
    assert.deepEqual(splitter.push('It costs 3.'), []);
    assert.deepEqual(splitter.push('50 euros. Ok'), ['It costs 3.50 euros.']);
  });

  it('releases a long first clause early at a comma, and only the first', () => {
    const text = 'I have looked at your booking for next Tuesday, and everything is in order, so you can come. Later, we can talk, if you like.';
    const releases = split(text, 4);
    assert.equal(releases[0]?.[0], 'I have looked at your booking for next Tuesday,');
    assert.deepEqual(releases.flat(), [
      'I have looked at your booking for next Tuesday,',
      'and everything is in order, so you can come.',
      'Later, we can talk, if you like.',
    ]);
  });

  it('keeps a short first clause with its sentence ("Yes, …")', () => {
    assert.deepEqual(sentences('Yes, that works. Bye.'), ['Yes, that works.', 'Bye.']);
  });

  it('never cuts at a comma inside a number', () => {
    assert.deepEqual(sentences('The total for all of your orders is 1,250 euros today.', 2), ['The total for all of your orders is 1,250 euros today.']);
  });

  it('flush returns the unfinished rest and starts over for the next answer', () => {
    const splitter = new SentenceSplitter();
    splitter.push('No full stop here');
    assert.deepEqual(splitter.flush(), ['No full stop here']);
    assert.deepEqual(splitter.flush(), []);
    // A new answer may again release its first clause early.
    assert.deepEqual(splitter.push('Thanks for waiting so long on the line today, '), ['Thanks for waiting so long on the line today,']);
  });
});
