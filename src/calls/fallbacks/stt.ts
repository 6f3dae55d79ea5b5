import { PIPELINE_RATE } from '../../voice/audio/format.ts';
import type { SttSession } from '../../voice/stt/stt.ts';
import type { FallbackContext } from './llm.ts';

/** Audio of one utterance kept to be heard again by a fallback: as much as a transcription takes. */
const MAX_REPLAY_SAMPLES = 120 * PIPELINE_RATE;

/** One transcriber of a call: its provider, and how a session of it is opened (with the plan's access, model and language). */
export interface SttCandidate {
  provider: string;
  open(): Promise<SttSession>;
}

interface Open {
  candidate: SttCandidate;
  session: SttSession;
}

/**
 * A call's transcriber with its fallbacks, as one SttSession. The first one that opens listens;
 * when it fails an utterance (its socket died, an error answer), the next one opens and takes
 * over, and hears that same utterance again from the audio kept of it, so the caller's words are
 * not lost and the caller hears no error. With no fallback, nothing is kept and a failure is the
 * call's, as before.
 */
export class FallbackSttSession implements SttSession {
  onInterim?: (text: string) => void;
  onSpeechFinal?: () => void;
  private utterance: Int16Array[] = [];
  private samples = 0;
  private closed = false;

  private constructor(private current: Open, private readonly candidates: readonly SttCandidate[], private readonly context: FallbackContext) {
    this.listen(current.session);
  }

  /** The transcriber listening now: what a failure of the call names. */
  get provider(): string {
    return this.current.candidate.provider;
  }

  /** The listening transcriber's preview, when it has one (a provider without interim text): the listener asks each time. */
  get preview(): (() => Promise<string>) | undefined {
    const { session } = this.current;
    return session.preview ? () => session.preview!() : undefined;
  }

  /** Opens the first transcriber that opens; rejects with the first one's error when none does. */
  static async open(candidates: readonly SttCandidate[], context: FallbackContext): Promise<FallbackSttSession> {
    const opened = await openNext(context.health.order(context.owner, 'stt', candidates), context, new Set());
    return new FallbackSttSession(opened, candidates, context);
  }

  write(pcm16k: Int16Array): void {
    this.current.session.write(pcm16k);
    if (this.candidates.length < 2 || this.samples >= MAX_REPLAY_SAMPLES) return;
    this.utterance.push(pcm16k.slice()); // the caller may reuse its buffer
    this.samples += pcm16k.length;
  }

  async endUtterance(): Promise<string> {
    const audio = this.utterance;
    this.utterance = [];
    this.samples = 0;
    const tried = new Set<SttCandidate>();
    for (;;) {
      const { candidate, session } = this.current;
      tried.add(candidate);
      try {
        const text = await session.endUtterance();
        this.context.health.succeeded(this.context.owner, 'stt', candidate.provider);
        this.context.ledger.served('stt', candidate.provider);
        return text;
      } catch (err) {
        if (this.closed) throw err;
        this.context.health.failed(this.context.owner, 'stt', candidate.provider);
        this.context.ledger.failed('stt', candidate.provider);
        const rest = this.context.health.order(this.context.owner, 'stt', this.candidates.filter((c) => !tried.has(c)));
        if (!rest.length) throw err;
        this.context.log.warn({ provider: candidate.provider }, 'transcriber failed; the next one takes over and hears the utterance again');
        void session.close().catch(() => undefined);
        const next = await openNext(rest, this.context, tried).catch(() => null);
        if (!next) throw err;
        if (this.closed) {
          await next.session.close();
          throw err;
        }
        this.current = next;
        this.listen(next.session);
        for (const pcm of audio) next.session.write(pcm);
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.current.session.close();
  }

  private listen(session: SttSession): void {
    session.onInterim = (text) => this.onInterim?.(text);
    session.onSpeechFinal = () => this.onSpeechFinal?.();
  }
}

/** The first of `candidates` that opens (each one tried is added to `tried`); those that refuse are marked failed. Rejects with the first error when none opens. */
async function openNext(candidates: readonly SttCandidate[], context: FallbackContext, tried: Set<SttCandidate>): Promise<Open> {
  let failure: unknown = null;
  for (const candidate of candidates) {
    tried.add(candidate);
    try {
      return { candidate, session: await candidate.open() };
    } catch (err) {
      context.health.failed(context.owner, 'stt', candidate.provider);
      context.ledger.failed('stt', candidate.provider);
      failure ??= err;
    }
  }
  throw failure;
}
