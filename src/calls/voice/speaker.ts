import { createEncoder, type AudioEncoder } from '../../voice/audio/format.ts';
import type { PacedOutput, Pacer } from '../../voice/pacer.ts';
import { SentenceSplitter } from '../../voice/sentences.ts';
import type { TtsSession } from '../../voice/tts/index.ts';
import { frameBytes, silence, type AudioLink } from './link.ts';

export interface SpeakerEvents {
  /** The first frame of an utterance went out to the peer (`at`: performance.now()). */
  firstAudio(id: string, at: number): void;
  /** An utterance is over: played to the end, or cut by the caller (`heard` is what went out of it). */
  spoken(id: string, heard: string, interrupted: boolean): void;
  /** The TTS provider failed: nothing more can be said through it. */
  failed(error: unknown): void;
}

interface Sentence {
  text: string;
  tag: string;
  played: boolean;
}

interface Utterance {
  id: string;
  sentences: Sentence[];
  splitter: SentenceSplitter;
  /** No more text will come. */
  ended: boolean;
  firstQueued: boolean;
}

interface Frame {
  bytes: Buffer;
  /** Set on the first frame of an utterance. */
  first: string | null;
}

/** The words of `text` a listener heard when `fraction` of its audio went out (cut at a word boundary). */
export function heardPart(text: string, fraction: number): string {
  if (fraction >= 0.95) return text;
  const words = text.split(/\s+/).filter(Boolean);
  return words.slice(0, Math.max(0, Math.round(words.length * fraction))).join(' ');
}

/**
 * The assistant's voice: utterances (the greeting, an answer as the LLM streams it) are split
 * into sentences, each synthesised in turn by the call's TTS session while the previous one
 * plays, converted to the link's format and cut into 20 ms frames paced by the process's Pacer.
 * Each sentence is a tag of the paced output, so a barge-in knows what the caller heard.
 */
export class Speaker {
  private readonly utterances = new Map<string, Utterance>();
  private readonly waiting: Sentence[] = [];
  private readonly output: PacedOutput<Frame>;
  private readonly frameSize: number;
  private readonly fill: number;
  private synthesis: AbortController | null = null;
  private closed = false;

  constructor(
    private readonly link: AudioLink,
    pacer: Pacer,
    private readonly tts: TtsSession,
    private readonly events: SpeakerEvents,
  ) {
    this.frameSize = frameBytes(link.format);
    this.fill = silence(link.format);
    this.output = pacer.createOutput<Frame>({
      lead: link.lead,
      send: (frame) => {
        link.sendFrame(frame.bytes);
        if (frame.first) events.firstAudio(frame.first, performance.now());
      },
      onPlayed: (tag) => this.played(tag),
    });
  }

  /** Something is being said or waits to be. */
  get speaking(): boolean {
    return this.utterances.size > 0;
  }

  /** A whole utterance (the greeting, a filler while a tool runs). */
  say(id: string, text: string): void {
    const writer = this.begin(id);
    writer.delta(text);
    writer.end();
  }

  /** An utterance whose text streams in: `delta` as the LLM streams, `end` once it is final. */
  begin(id: string): { delta(text: string): void; end(): void } {
    const utterance: Utterance = { id, sentences: [], splitter: new SentenceSplitter(), ended: false, firstQueued: false };
    this.utterances.set(id, utterance);
    return {
      delta: (text) => this.add(utterance, utterance.splitter.push(text)),
      end: () => {
        if (utterance.ended) return;
        this.add(utterance, utterance.splitter.flush());
        utterance.ended = true;
        this.settle(utterance);
      },
    };
  }

  /**
   * Barge-in: stops the voice at once (the queued frames are dropped, the sentence being
   * synthesised is abandoned) and reports, for every utterance not yet over, what the caller heard.
   */
  interrupt(): void {
    const report = this.output.clear();
    this.synthesis?.abort();
    this.synthesis = null;
    this.waiting.length = 0;
    const partial = new Map<string, number>();
    let ahead = report.aheadMs;
    // Sent frames the peer has not played yet belong to the latest sentence that went out.
    for (const cut of [...report.cut].reverse()) {
      const heardMs = Math.max(0, cut.sentMs - ahead);
      ahead = Math.max(0, ahead - cut.sentMs);
      partial.set(cut.tag, cut.sentMs + cut.droppedMs > 0 ? heardMs / (cut.sentMs + cut.droppedMs) : 0);
    }
    for (const utterance of [...this.utterances.values()]) {
      const heard = utterance.sentences
        .map((s) => (s.played ? s.text : heardPart(s.text, partial.get(s.tag) ?? 0)))
        .filter(Boolean)
        .join(' ');
      this.utterances.delete(utterance.id);
      this.events.spoken(utterance.id, heard, true);
    }
  }

  close(): void {
    this.closed = true;
    this.synthesis?.abort();
    this.output.close();
    this.utterances.clear();
    this.waiting.length = 0;
  }

  private add(utterance: Utterance, texts: string[]): void {
    if (this.closed || !this.utterances.has(utterance.id)) return;
    for (const text of texts) {
      const sentence = { text, tag: `${utterance.id}#${utterance.sentences.length}`, played: false };
      utterance.sentences.push(sentence);
      this.waiting.push(sentence);
    }
    void this.pump();
  }

  private async pump(): Promise<void> {
    if (this.synthesis || this.closed) return;
    const sentence = this.waiting.shift();
    if (!sentence) return;
    const controller = new AbortController();
    this.synthesis = controller;
    const utterance = this.utterances.get(sentence.tag.slice(0, sentence.tag.lastIndexOf('#')));
    try {
      await this.synthesize(sentence, utterance, controller.signal);
    } catch (error) {
      if (!controller.signal.aborted) {
        this.events.failed(error);
        return;
      }
    } finally {
      if (this.synthesis === controller) this.synthesis = null;
    }
    void this.pump();
  }

  private async synthesize(sentence: Sentence, utterance: Utterance | undefined, signal: AbortSignal): Promise<void> {
    let encoder: AudioEncoder | null = null;
    let rate = 0;
    let carry = Buffer.alloc(0);
    let queued = 0;
    const enqueue = (bytes: Buffer) => {
      const first = utterance && !utterance.firstQueued ? utterance.id : null;
      if (utterance) utterance.firstQueued = true;
      this.output.enqueue({ bytes, first }, sentence.tag);
      queued++;
    };
    for await (const chunk of this.tts.synthesize(sentence.text, signal)) {
      if (signal.aborted) return;
      if (!encoder || chunk.sampleRate !== rate) {
        rate = chunk.sampleRate;
        encoder = createEncoder(rate, this.link.format);
      }
      const bytes = Buffer.concat([carry, encoder.encode(chunk.pcm)]);
      let offset = 0;
      for (; offset + this.frameSize <= bytes.length; offset += this.frameSize) enqueue(bytes.subarray(offset, offset + this.frameSize));
      carry = bytes.subarray(offset);
    }
    if (signal.aborted) return;
    if (carry.length) enqueue(Buffer.concat([carry, Buffer.alloc(this.frameSize - carry.length, this.fill)]));
    if (queued === 0) this.played(sentence.tag);
    else this.output.end(sentence.tag);
  }

  private played(tag: string): void {
    const id = tag.slice(0, tag.lastIndexOf('#'));
    const utterance = this.utterances.get(id);
    const sentence = utterance?.sentences.find((s) => s.tag === tag);
    if (!utterance || !sentence) return;
    sentence.played = true;
    this.settle(utterance);
  }

  /** An utterance whose text has all come and been played is over. */
  private settle(utterance: Utterance): void {
    if (!utterance.ended || !utterance.sentences.every((s) => s.played) || !this.utterances.has(utterance.id)) return;
    this.utterances.delete(utterance.id);
    this.events.spoken(utterance.id, utterance.sentences.map((s) => s.text).join(' '), false);
  }
}
