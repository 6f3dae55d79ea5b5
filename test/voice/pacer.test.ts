import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualPacerClock } from '../../src/voice/pacer-clock.ts';
import { Pacer } from '../../src/voice/pacer.ts';

/** An output that records the time of every frame it sends. */
function recorder(pacer: Pacer, clock: ManualPacerClock, lead = 0) {
  const sent: { frame: number; at: number }[] = [];
  const played: { tag: string; ms: number }[] = [];
  const output = pacer.createOutput<number>({
    lead,
    send: (frame) => sent.push({ frame, at: clock.now() }),
    onPlayed: (tag, ms) => played.push({ tag, ms }),
  });
  return { output, sent, played };
}

describe('Pacer', () => {
  it('sends one frame per 20 ms tick when the lead is 0', () => {
    const clock = new ManualPacerClock(1000);
    const pacer = new Pacer(clock);
    const { output, sent } = recorder(pacer, clock);
    for (let i = 0; i < 5; i++) output.enqueue(i);
    clock.advance(100);
    assert.deepEqual(sent, [0, 1, 2, 3, 4].map((frame) => ({ frame, at: 1000 + frame * 20 })));
    assert.equal(pacer.stats().frames, 5);
    assert.equal(pacer.stats().maxMs, 0);
    output.close();
  });

  it('sends up to `lead` frames ahead of real time, then one per tick', () => {
    const clock = new ManualPacerClock(0);
    const pacer = new Pacer(clock);
    const { output, sent } = recorder(pacer, clock, 3);
    for (let i = 0; i < 8; i++) output.enqueue(i);
    clock.advance(0);
    assert.equal(sent.length, 4, 'the frame due now and three ahead');
    clock.advance(20);
    assert.equal(sent.length, 5);
    clock.advance(80);
    assert.deepEqual(sent.map((s) => s.at), [0, 0, 0, 0, 20, 40, 60, 80]);
    // Lateness counts from when a frame may go (its due time minus the lead), so none was late.
    assert.equal(pacer.stats().maxMs, 0);
    output.close();
  });

  it('restarts an output that ran dry at the next tick instead of bursting to catch up', () => {
    const clock = new ManualPacerClock(0);
    const pacer = new Pacer(clock);
    const { output, sent } = recorder(pacer, clock);
    output.enqueue(0);
    clock.advance(50);
    output.enqueue(1);
    output.enqueue(2);
    clock.advance(50);
    assert.deepEqual(sent.map((s) => s.at), [0, 60, 80]);
    output.close();
  });

  it('schedules ticks on the ideal grid: late timers do not shift the frames that follow', () => {
    const clock = new ManualPacerClock(0);
    const pacer = new Pacer(clock);
    const { output, sent } = recorder(pacer, clock);
    for (let i = 0; i < 6; i++) output.enqueue(i);
    clock.advance(0); // frame 0 at 0
    clock.stall(27); // the tick due at 20 runs at 27
    clock.advance(0);
    clock.advance(13); // the next one is asked for at 40, not 27 + 20
    clock.advance(40);
    assert.deepEqual(sent.map((s) => s.at), [0, 27, 40, 60, 80]);
    const stats = pacer.stats();
    assert.equal(stats.maxMs, 7);
    output.close();
  });

  it('after a stall sends what fell due at once and reports how late it was', () => {
    const clock = new ManualPacerClock(0);
    const pacer = new Pacer(clock);
    const { output, sent } = recorder(pacer, clock);
    for (let i = 0; i < 5; i++) output.enqueue(i);
    clock.advance(0);
    clock.stall(65);
    clock.advance(0);
    assert.deepEqual(sent.map((s) => s.at), [0, 65, 65, 65]);
    const stats = pacer.stats();
    assert.equal(stats.frames, 4);
    assert.equal(stats.maxMs, 45);
    output.close();
  });

  it('clear() mid-stream drops the queue and reports what each tag had sent', () => {
    const clock = new ManualPacerClock(0);
    const pacer = new Pacer(clock);
    const { output, sent, played } = recorder(pacer, clock, 2);
    for (let i = 0; i < 5; i++) output.enqueue(i, 'first');
    output.end('first');
    for (let i = 5; i < 15; i++) output.enqueue(i, 'second');
    clock.advance(100); // frames 0..2 at 0, then one per tick: 8 sent by 100
    assert.deepEqual(played, [{ tag: 'first', ms: 100 }]);
    assert.equal(output.playedMs('second'), 60);
    const report = output.clear();
    assert.deepEqual(report.cut, [{ tag: 'second', sentMs: 60, droppedMs: 140 }]);
    assert.equal(report.aheadMs, 60, 'the frame starting now and two of lead were not yet played');
    assert.equal(output.queuedFrames, 0);
    clock.advance(100);
    assert.equal(sent.length, 8, 'nothing is sent after clear()');
    output.enqueue(99, 'third');
    clock.advance(20);
    assert.equal(sent.at(-1)?.frame, 99);
    output.close();
  });

  it('pause() stops sending and takes back the lead the peer had not played; resume() plays on from the first frame not heard', () => {
    const clock = new ManualPacerClock(0);
    const pacer = new Pacer(clock);
    const { output, sent, played } = recorder(pacer, clock, 2);
    for (let i = 0; i < 10; i++) output.enqueue(i, 'answer');
    output.end('answer');
    clock.advance(100); // frames 0..2 at 0, then one per tick: 0..7 sent by 100, 5 of them played
    assert.equal(sent.length, 8);
    output.pause();
    assert.ok(output.paused);
    assert.equal(output.playedMs('answer'), 100, 'frames 5, 6 and 7 (starting now, and the lead) were taken back');
    clock.advance(200);
    assert.equal(sent.length, 8, 'nothing is sent while paused');
    output.resume();
    clock.advance(100);
    assert.deepEqual(sent.slice(8).map((s) => s.frame), [5, 6, 7, 8, 9], 'the taken-back frames go first, in order');
    assert.deepEqual(played, [{ tag: 'answer', ms: 200 }], 'played once, counting each frame once');
    output.close();
  });

  it('clear() while paused drops the taken-back frames too, and reports only what was heard as sent', () => {
    const clock = new ManualPacerClock(0);
    const pacer = new Pacer(clock);
    const { output, sent } = recorder(pacer, clock, 2);
    for (let i = 0; i < 10; i++) output.enqueue(i, 'answer');
    clock.advance(100);
    output.pause();
    const report = output.clear();
    assert.deepEqual(report, { cut: [{ tag: 'answer', sentMs: 100, droppedMs: 100 }], aheadMs: 0 });
    assert.ok(!output.paused, 'a cleared output is not paused');
    output.enqueue(42, 'next');
    clock.advance(20);
    assert.equal(sent.at(-1)?.frame, 42);
    output.close();
  });

  it('a tag reported played before a pause is not reported again when its taken-back frames replay', () => {
    const clock = new ManualPacerClock(0);
    const pacer = new Pacer(clock);
    const { output, sent, played } = recorder(pacer, clock, 2);
    for (let i = 0; i < 3; i++) output.enqueue(i, 'short');
    output.end('short');
    clock.advance(0); // all three sent at once (lead 2): played, though the peer holds them
    assert.deepEqual(played, [{ tag: 'short', ms: 60 }]);
    output.pause();
    output.resume();
    clock.advance(60);
    assert.deepEqual(sent.map((s) => s.frame), [0, 1, 2, 0, 1, 2]);
    assert.equal(played.length, 1);
    output.close();
  });

  it('drives many outputs from one timer and stops it when the last output closes', () => {
    const clock = new ManualPacerClock(0);
    const pacer = new Pacer(clock);
    const outputs = Array.from({ length: 50 }, () => recorder(pacer, clock));
    for (const { output } of outputs) for (let i = 0; i < 10; i++) output.enqueue(i);
    clock.advance(200);
    assert.equal(clock.pendingTimers, 1);
    for (const { sent } of outputs) assert.deepEqual(sent.map((s) => s.at), [0, 20, 40, 60, 80, 100, 120, 140, 160, 180]);
    for (const { output } of outputs) output.close();
    assert.equal(clock.pendingTimers, 0);
    assert.equal(pacer.outputCount, 0);
  });

  it('keeps every frame on its tick over a long stream from a fractional start (no float drift)', () => {
    const clock = new ManualPacerClock(256.389535);
    const pacer = new Pacer(clock);
    const { output, sent } = recorder(pacer, clock, 3);
    for (let i = 0; i < 3000; i++) output.enqueue(i);
    clock.advance(60_000);
    assert.equal(sent.length, 3000);
    assert.equal(pacer.stats().maxMs, 0);
    // Three frames of lead at the start, then exactly one per tick.
    assert.ok(Math.abs((sent.at(-1)?.at ?? 0) - (256.389535 + 2996 * 20)) < 1e-6);
    output.close();
  });

  it('a send that throws does not stop the other outputs', () => {
    const clock = new ManualPacerClock(0);
    const pacer = new Pacer(clock);
    const errors: unknown[] = [];
    const broken = pacer.createOutput<number>({ send: () => { throw new Error('socket gone'); }, onSendError: (e) => errors.push(e) });
    const { output, sent } = recorder(pacer, clock);
    broken.enqueue(1);
    output.enqueue(1);
    clock.advance(0);
    assert.equal(errors.length, 1);
    assert.equal(sent.length, 1);
    broken.close();
    output.close();
  });
});
