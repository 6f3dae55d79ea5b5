import { TtsError, type TtsChunk, type TtsSession } from '../../voice/tts/types.ts';
import type { FallbackContext } from './llm.ts';

/** With a fallback behind it, a voice that gives no audio for a sentence within this long has failed it. */
export const TTS_FIRST_AUDIO_MS = 5_000;

/** One voice of a call: its provider, and how a session of it is opened (with the plan's access and voice settings). */
export interface TtsCandidate {
  provider: string;
  open(signal: AbortSignal): Promise<TtsSession>;
}

/**
 * A call's voice with its fallbacks, as one TtsSession. A sentence goes to the first voice not
 * cooling down; when that voice fails before the sentence's first audio (a refused or dropped
 * connection, an error answer, no audio within TTS_FIRST_AUDIO_MS) the same sentence goes to
 * the next, so the caller hears it in another voice rather than an error. A voice that fails once
 * its audio has begun fails the sentence, as before: the caller heard part of it, and starting
 * it again in another voice would say it twice. Fallback voices open when first needed.
 */
export class FallbackTtsSession implements TtsSession {
  private readonly opened = new Map<TtsCandidate, Promise<TtsSession>>();
  private last: string;

  private constructor(private readonly candidates: readonly TtsCandidate[], private readonly context: FallbackContext) {
    this.last = candidates[0]?.provider ?? 'tts';
  }

  /** The voice that spoke last, or failed last: what a failure of the call names. */
  get provider(): string {
    return this.last;
  }

  /** Opens the first voice that opens (a refused one is marked failed, and the next is tried); rejects with the first one's error when none does. */
  static async open(candidates: readonly TtsCandidate[], context: FallbackContext, signal: AbortSignal): Promise<FallbackTtsSession> {
    const voice = new FallbackTtsSession(candidates, context);
    let failure: unknown = null;
    for (const candidate of context.health.order(context.owner, 'tts', candidates)) {
      try {
        await voice.session(candidate, signal);
        return voice;
      } catch (err) {
        if (signal.aborted) throw err;
        voice.failed(candidate);
        failure ??= err;
      }
    }
    await voice.close();
    throw failure;
  }

  async *synthesize(text: string, signal: AbortSignal): AsyncIterable<TtsChunk> {
    const { health, ledger, owner } = this.context;
    let failure: unknown = null;
    for (const candidate of health.order(owner, 'tts', this.candidates)) {
      const attempt = new AbortController();
      const attemptSignal = AbortSignal.any([signal, attempt.signal]);
      let iterator: AsyncIterator<TtsChunk> | null = null;
      let first: IteratorResult<TtsChunk>;
      try {
        iterator = (await this.session(candidate, attemptSignal)).synthesize(text, attemptSignal)[Symbol.asyncIterator]();
        first = await this.firstAudio(iterator.next(), attempt, candidate.provider);
      } catch (err) {
        await iterator?.return?.();
        if (signal.aborted) return;
        this.failed(candidate);
        failure ??= err;
        continue;
      }
      this.last = candidate.provider;
      health.succeeded(owner, 'tts', candidate.provider);
      ledger.served('tts', candidate.provider);
      if (first.done) return;
      yield first.value;
      try {
        for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
      } catch (err) {
        if (!signal.aborted) this.failed(candidate);
        throw err;
      } finally {
        await iterator.return?.();
      }
      return;
    }
    throw failure instanceof Error ? failure : new TtsError(this.last, 'no voice could speak');
  }

  async close(): Promise<void> {
    const sessions = [...this.opened.values()];
    this.opened.clear();
    await Promise.all(sessions.map((s) => s.then((session) => session.close(), () => undefined)));
  }

  /** The candidate's session, opened once (a failed opening is forgotten, so a later sentence may try again). */
  private session(candidate: TtsCandidate, signal: AbortSignal): Promise<TtsSession> {
    let session = this.opened.get(candidate);
    if (!session) {
      session = candidate.open(signal);
      this.opened.set(candidate, session);
      session.catch(() => this.opened.delete(candidate));
    }
    return session;
  }

  /** The first chunk, or a failure when it is late and another voice could take the sentence instead. */
  private firstAudio(next: Promise<IteratorResult<TtsChunk>>, attempt: AbortController, provider: string): Promise<IteratorResult<TtsChunk>> {
    if (this.candidates.length < 2) return next;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        attempt.abort();
        reject(new TtsError(provider, `no audio within ${TTS_FIRST_AUDIO_MS / 1000} s`));
      }, TTS_FIRST_AUDIO_MS);
    });
    return Promise.race([next, late]).finally(() => clearTimeout(timer));
  }

  private failed(candidate: TtsCandidate): void {
    this.last = candidate.provider;
    this.context.health.failed(this.context.owner, 'tts', candidate.provider);
    this.context.ledger.failed('tts', candidate.provider);
    if (this.candidates.length > 1) this.context.log.warn({ provider: candidate.provider }, 'voice failed before its audio; the next one speaks the sentence');
  }
}
