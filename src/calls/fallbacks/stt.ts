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
 * when it dies (its socket closed: it says so at once) or fails an utterance (an error answer),
 * the next one opens and takes over, and hears the utterance in progress again from the audio
 * kept of it, so the caller's words are not lost and the caller hears no error. With no
 * fallback, nothing is kept, and a death or failure is the call's, as before.
 */
export class FallbackSttSession implements SttSession {
  onInterim?: (text: string) => void;
  onSpeechFinal?: () => void;
  onError?: (error: unknown) => void;
  private utterance: Int16Array[] = [];
  private samples = 0;
  private closed = false;
  /** Candidates tried since the last utterance a transcriber answered. */
  private readonly tried = new Set<SttCandidate>();
  /** Set while the next transcriber opens after one died. */
  private switching: Promise<void> | null = null;

  private constructor(private current: Open, private readonly candidates: readonly SttCandidate[], private readonly context: FallbackContext) {
    this.tried.add(current.candidate);
    this.listen(current);
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
    const tried = new Set<SttCandidate>();
    const opened = await openNext(context.health.order(context.owner, 'stt', candidates), context, tried);
    const session = new FallbackSttSession(opened, candidates, context);
    for (const candidate of tried) session.tried.add(candidate);
    return session;
  }

  write(pcm16k: Int16Array): void {
    this.current.session.write(pcm16k);
    if (this.candidates.length < 2 || this.samples >= MAX_REPLAY_SAMPLES) return;
    this.utterance.push(pcm16k.slice()); // the caller may reuse its buffer
    this.samples += pcm16k.length;
  }

  async endUtterance(): Promise<string> {
    for (;;) {
      await this.switching;
      const open = this.current;
      try {
        const text = await open.session.endUtterance();
        this.context.health.succeeded(this.context.owner, 'stt', open.candidate.provider);
        this.context.ledger.served('stt', open.candidate.provider);
        this.utterance = [];
        this.samples = 0;
        this.tried.clear();
        this.tried.add(open.candidate);
        return text;
      } catch (err) {
        if (this.closed) throw err;
        await this.switching;
        // It died meanwhile, and the next one already took over with the utterance: ask that one.
        if (this.current !== open) continue;
        if (!(await this.takeOver(open, err))) throw err;
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.current.session.close();
  }

  /**
   * `open` failed: it is marked failed and closed, and the next transcriber not tried yet opens
   * and hears the utterance in progress. False when none is left (the failure is the call's).
   */
  private async takeOver(open: Open, error: unknown): Promise<boolean> {
    const { health, ledger, log, owner } = this.context;
    health.failed(owner, 'stt', open.candidate.provider);
    ledger.failed('stt', open.candidate.provider);
    void open.session.close().catch(() => undefined);
    const rest = health.order(owner, 'stt', this.candidates.filter((c) => !this.tried.has(c)));
    if (!rest.length) return false;
    log.warn({ provider: open.candidate.provider, err: error instanceof Error ? error.message : 'unknown error' }, 'transcriber failed; the next one takes over and hears the utterance again');
    const next = await openNext(rest, this.context, this.tried).catch(() => null);
    if (!next) return false;
    if (this.closed) {
      await next.session.close();
      return false;
    }
    this.current = next;
    this.listen(next);
    for (const pcm of this.utterance) next.session.write(pcm);
    return true;
  }

  /** The listening transcriber died between utterances or within one: the next takes over now, not at the utterance's end. */
  private died(open: Open, error: unknown): void {
    if (this.closed || this.current !== open || this.switching) return;
    this.switching = this.takeOver(open, error)
      .then((took) => {
        if (!took && !this.closed) this.onError?.(error);
      })
      .finally(() => (this.switching = null));
  }

  private listen(open: Open): void {
    open.session.onInterim = (text) => this.onInterim?.(text);
    open.session.onSpeechFinal = () => this.onSpeechFinal?.();
    open.session.onError = (error) => this.died(open, error);
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
