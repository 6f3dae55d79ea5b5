import type { Pacer } from '../../voice/pacer.ts';
import { SentenceSplitter } from '../../voice/sentences.ts';
import type { TtsSession } from '../../voice/tts/index.ts';
import type { AudioLink } from './link.ts';
import { heardMs, VoiceOutput } from './output.ts';

export interface SpeakerEvents {
  /** The first frame of an utterance went out to the peer (`at`: the pacer's clock). */
  firstAudio(id: string, at: number): void;
  /** An utterance is over: played to the end, or cut by the caller (`heard` is what went out of it). */
  played(id: string, heard: string, interrupted: boolean): void;
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
  firstSent: boolean;
}

/** A sentence's tag is `<utterance id>#<n>`. */
const utteranceOf = (tag: string) => tag.slice(0, tag.lastIndexOf('#'));

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
  private readonly output: VoiceOutput;
  private synthesis: AbortController | null = null;
  private closed = false;

  constructor(
    link: AudioLink,
    pacer: Pacer,
    private readonly tts: TtsSession,
    private readonly events: SpeakerEvents,
  ) {
    this.output = new VoiceOutput(link, pacer, {
      firstFrame: (tag, at) => {
        const utterance = this.utterances.get(utteranceOf(tag));
        if (!utterance || utterance.firstSent) return;
        utterance.firstSent = true;
        events.firstAudio(utterance.id, at);
      },
      played: (tag) => this.played(tag),
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
    const utterance: Utterance = { id, sentences: [], splitter: new SentenceSplitter(), ended: false, firstSent: false };
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

  /** Stops the audio at once, keeping what was not heard; synthesis goes on meanwhile. */
  pause(): void {
    this.output.pause();
  }

  /** Plays on from the first frame the caller did not hear. */
  resume(): void {
    this.output.resume();
  }

  get paused(): boolean {
    return this.output.paused;
  }

  /**
   * Barge-in: stops the voice at once (the queued frames are dropped, the sentence being
   * synthesised is abandoned) and reports, for every utterance not yet over, what the caller heard.
   */
  interrupt(): void {
    const cut = heardMs(this.output.clear());
    this.synthesis?.abort();
    this.synthesis = null;
    this.waiting.length = 0;
    const fraction = (tag: string) => {
      const part = cut.get(tag);
      return part && part.totalMs > 0 ? part.heardMs / part.totalMs : 0;
    };
    for (const utterance of [...this.utterances.values()]) {
      const heard = utterance.sentences
        .map((s) => (s.played ? s.text : heardPart(s.text, fraction(s.tag))))
        .filter(Boolean)
        .join(' ');
      this.utterances.delete(utterance.id);
      this.events.played(utterance.id, heard, true);
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
    try {
      await this.synthesize(sentence, controller.signal);
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

  private async synthesize(sentence: Sentence, signal: AbortSignal): Promise<void> {
    for await (const chunk of this.tts.synthesize(sentence.text, signal)) {
      if (signal.aborted) return;
      this.output.write(sentence.tag, chunk.pcm, chunk.sampleRate);
    }
    if (!signal.aborted) this.output.end(sentence.tag);
  }

  private played(tag: string): void {
    const utterance = this.utterances.get(utteranceOf(tag));
    const sentence = utterance?.sentences.find((s) => s.tag === tag);
    if (!utterance || !sentence) return;
    sentence.played = true;
    this.settle(utterance);
  }

  /** An utterance whose text has all come and been played is over. */
  private settle(utterance: Utterance): void {
    if (!utterance.ended || !utterance.sentences.every((s) => s.played) || !this.utterances.has(utterance.id)) return;
    this.utterances.delete(utterance.id);
    this.events.played(utterance.id, utterance.sentences.map((s) => s.text).join(' '), false);
  }
}
