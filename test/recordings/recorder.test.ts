// The recorder and its timeline alone, on a manual clock: where each side's audio lands, a
// barge-in's cut, bounded memory over a long call; and the sealed format's refusals.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { ChunkLayout, openChunk, sealChunk, streamHeader } from '../../src/crypto/chunked-cipher.ts';
import { CallAudioRecorder, type RecordingSink } from '../../src/calls/recording/recorder.ts';
import type { AudioLink } from '../../src/calls/voice/link.ts';
import { timedLink } from '../../src/calls/voice/timeline.ts';
import { ManualPacerClock } from '../../src/voice/pacer-clock.ts';

const RATE = 8000;
const FRAME = 320; // 20 ms of PCM16 at 8 kHz

/** A transport's link that only notes what it is asked, and lets the test play the caller. */
function bareLink() {
  const listeners: ((chunk: Buffer) => void)[] = [];
  const link: AudioLink = {
    format: { encoding: 'pcm_s16le', sampleRate: RATE }, lead: 5,
    sendFrame: () => {}, flushPeer: () => {}, onAudio: (l) => void listeners.push(l),
  };
  return { link, say: (chunk: Buffer) => listeners.forEach((l) => l(chunk)) };
}

const tone = (value: number, bytes = FRAME) => {
  const b = Buffer.alloc(bytes);
  for (let i = 0; i < bytes / 2; i++) b.writeInt16LE(value, i * 2);
  return b;
};

function sink() {
  const parts: Buffer[] = [];
  const s: RecordingSink & { parts: Buffer[]; summary: { bytes: number; durationMs: number } | null } = {
    parts, summary: null,
    write: (pcm) => void parts.push(Buffer.from(pcm)),
    finish: async (summary) => void (s.summary = summary),
  };
  return s;
}

/** Sample `n` of one channel (0 left, 1 right) of what the sink got. */
const at = (parts: Buffer[], channel: 0 | 1, ms: number) => Buffer.concat(parts).readInt16LE((Math.round((ms * RATE) / 1000) * 2 + channel) * 2);

describe('the recorder on a timed link', () => {
  it('places frames sent ahead where they play, cuts what a flush took back, and the caller where it arrived', async () => {
    const clock = new ManualPacerClock(1_000);
    const { link, say } = bareLink();
    const timed = timedLink(link, clock);
    const out = sink();
    const recorder = new CallAudioRecorder(timed.format, timed.timeline, out);
    timed.tap(recorder);
    // Five frames handed over at once at 100 ms (a lead): they play 100-200 ms.
    clock.advance(100);
    for (let i = 0; i < 5; i++) timed.sendFrame(tone(1000 + i), i === 0);
    assert.equal(timed.timeline.lastFrameAt, 180);
    assert.equal(timed.timeline.playEnd, 200);
    // At 140 ms the caller barges in: what would have played from 140 ms on was never heard.
    clock.advance(40);
    timed.flushPeer();
    assert.equal(timed.timeline.playEnd, 140);
    // The caller's 20 ms chunks arriving at 160, 180, 200 ms lie at 140-200 ms.
    for (let i = 0; i < 3; i++) {
      clock.advance(20);
      say(tone(-500));
    }
    // Silence, then the caller again after 1 s: a gap of more than 250 ms stays a gap.
    clock.advance(1_000);
    say(tone(-700));
    await recorder.close();
    const { parts } = out;
    assert.equal(at(parts, 1, 110), 1000);
    assert.equal(at(parts, 1, 130), 1001);
    assert.equal(at(parts, 1, 150), 0, 'cut at 140 ms');
    assert.equal(at(parts, 0, 150), -500);
    assert.equal(at(parts, 0, 190), -500);
    assert.equal(at(parts, 0, 600), 0, 'silence where the caller sent nothing');
    assert.equal(at(parts, 0, 1_190), -700, 'placed when it arrived, not closed up');
    assert.equal(out.summary!.bytes, Buffer.concat(parts).length);
  });

  it('holds a second or two of audio however long the call: a 20-minute call is written out as it goes', async () => {
    const clock = new ManualPacerClock(0);
    const { link, say } = bareLink();
    const timed = timedLink(link, clock);
    const out = sink();
    const recorder = new CallAudioRecorder(timed.format, timed.timeline, out);
    timed.tap(recorder);
    let most = 0;
    for (let t = 0; t < 20 * 60_000; t += 20) {
      clock.advance(20);
      say(tone(100));
      timed.sendFrame(tone(200), t === 0);
      const held = timed.timeline.now() * RATE * 4 / 1000 - out.parts.reduce((n, p) => n + p.length, 0);
      most = Math.max(most, held);
    }
    assert.ok(most <= 1.5 * RATE * 4, `at most 1.5 s held, was ${(most / RATE / 4).toFixed(2)} s`);
    await recorder.close();
    assert.equal(out.summary!.durationMs, 20 * 60_000 + 20);
  });
});

describe('the sealed chunk format', () => {
  it('opens what it sealed, and refuses a changed byte, a chunk read as another, and a stream cut after a whole chunk', () => {
    const key = randomBytes(32);
    const header = streamHeader(16);
    const plain = randomBytes(40);
    const layout = new ChunkLayout(16, plain.length);
    const records = [0, 1, 2].map((i) => sealChunk(key, header, i, plain.subarray(i * 16, i * 16 + layout.plainOf(i)), i === layout.lastIndex));
    assert.equal(layout.sealedBytes, header.length + records.reduce((n, r) => n + r.length, 0));
    assert.ok(Buffer.concat(records.map((r, i) => openChunk(key, header, i, r, i === layout.lastIndex))).equals(plain));
    const flipped = Buffer.from(records[1]!);
    flipped[3]! ^= 1;
    assert.throws(() => openChunk(key, header, 1, flipped, false));
    assert.throws(() => openChunk(key, header, 0, records[1]!, false), 'a record moved to another place');
    assert.throws(() => openChunk(key, header, 1, records[1]!, true), 'the second chunk passed off as the last: a truncated stream');
    assert.throws(() => openChunk(randomBytes(32), header, 0, records[0]!, false), 'another key');
  });
});
