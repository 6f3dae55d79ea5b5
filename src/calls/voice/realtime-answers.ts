import type { ToolCallRequest } from '../tool-call.ts';
import { heardPart } from './speaker.ts';

/** One spoken item of a Realtime response, from its first event until it has been played or cut. */
export interface Answer {
  /** The utterance id the session knows it by: the say() id it answers, else the item id. */
  id: string;
  itemId: string;
  responseId: string;
  /** The model's transcript of its audio, so far. */
  transcript: string;
  /** Audio received so far. */
  receivedMs: number;
}

export interface AnswerEvents {
  played(id: string, heard: string, interrupted: boolean): void;
  /** All the audio of an item has come: its output may end (and report it played once sent). */
  end(itemId: string): void;
}

/**
 * The bookkeeping of what a Realtime model is saying: which response answers which say(), the
 * items being played, the responses still running, those a barge-in cut (their late events are
 * dropped), and the tool calls of each response. No I/O: RealtimeVoice does that.
 */
export class RealtimeAnswers {
  private readonly items = new Map<string, Answer>();
  /** say() ids whose response has not begun. */
  private readonly expected = new Set<string>();
  /** say() ids cut before their response began: it is cancelled when it does. */
  private readonly unwanted = new Set<string>();
  /** Response id → the say() id it answers, until its first item. */
  private readonly utterances = new Map<string, string>();
  private readonly running = new Set<string>();
  private readonly dropped = new Set<string>();
  private readonly calls = new Map<string, ToolCallRequest[]>();

  constructor(private readonly events: AnswerEvents) {}

  /** Something is being said, or was asked for and has not begun. */
  get pending(): boolean {
    return this.items.size > 0 || this.expected.size > 0 || this.utterances.size > 0;
  }

  expect(id: string): void {
    this.expected.add(id);
  }

  /** A response began (`utterance`: the say() id its request carried). True when it is unwanted and must be cancelled. */
  created(responseId: string, utterance: string | undefined): boolean {
    this.running.add(responseId);
    if (utterance === undefined) return false;
    if (this.unwanted.delete(utterance)) {
      this.dropped.add(responseId);
      return true;
    }
    if (this.expected.delete(utterance)) this.utterances.set(responseId, utterance);
    return false;
  }

  /** The answer an audio or transcript event is part of, begun by its first event; null for a response a barge-in cut. */
  answer(responseId: string, itemId: string): Answer | null {
    if (this.dropped.has(responseId)) return null;
    let answer = this.items.get(itemId);
    if (!answer) {
      this.running.add(responseId);
      const id = this.utterances.get(responseId) ?? itemId;
      this.utterances.delete(responseId);
      answer = { id, itemId, responseId, transcript: '', receivedMs: 0 };
      this.items.set(itemId, answer);
    }
    return answer;
  }

  byItem(itemId: string): Answer | undefined {
    return this.items.get(itemId);
  }

  /** Kept even for a cut response: the conversation holds the call, so it gets its result. */
  toolCall(responseId: string, call: ToolCallRequest): void {
    const calls = this.calls.get(responseId) ?? [];
    calls.push(call);
    this.calls.set(responseId, calls);
  }

  /** A response is over: its items' audio is complete. Its tool calls, to be run. */
  done(responseId: string, status: string): ToolCallRequest[] {
    this.running.delete(responseId);
    this.dropped.delete(responseId);
    const utterance = this.utterances.get(responseId);
    this.utterances.delete(responseId);
    if (utterance !== undefined) this.events.played(utterance, '', status !== 'completed'); // it said nothing
    const ending = [...this.items.values()].filter((a) => a.responseId === responseId);
    for (const answer of ending) this.events.end(answer.itemId);
    const calls = this.calls.get(responseId) ?? [];
    this.calls.delete(responseId);
    return calls;
  }

  /** All the audio of an item went out: said in full. */
  played(itemId: string): void {
    const answer = this.items.get(itemId);
    if (!answer) return;
    this.items.delete(itemId);
    this.events.played(answer.id, answer.transcript, false);
  }

  /**
   * Barge-in: every answer not over is reported with the words of it heard (`heardMs` says how
   * much of its audio; it also truncates it). `cancel`: a response is still running.
   */
  interrupt(heardMs: (answer: Answer) => number): { cancel: boolean } {
    const cut = [...this.items.values()];
    this.items.clear();
    for (const answer of cut) {
      const ms = heardMs(answer);
      this.events.played(answer.id, heardPart(answer.transcript, answer.receivedMs > 0 ? ms / answer.receivedMs : 0), true);
    }
    for (const id of [...this.expected, ...this.utterances.values()]) this.events.played(id, '', true);
    for (const id of this.expected) this.unwanted.add(id);
    this.expected.clear();
    this.utterances.clear();
    for (const responseId of this.running) this.dropped.add(responseId);
    return { cancel: this.running.size > 0 };
  }
}
