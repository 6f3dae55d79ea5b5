import type { Clock } from '../../clock.ts';

/** How long a provider that failed is passed over before it is tried again (docs/calls.md, "Fallbacks"). */
export const COOL_DOWN_MS = 30_000;
/** Failures remembered at most; past this the expired ones are forgotten first, then the oldest. */
const MAX_REMEMBERED = 10_000;

export type ProviderKind = 'llm' | 'stt' | 'tts';

/**
 * Which providers failed lately, per process (one per app, on the call runtime): a provider that
 * failed one of an organization's calls is skipped by that organization's next turns for
 * COOL_DOWN_MS, then tried again. Kept per organization, so one tenant's bad key or base URL never
 * steers another tenant's calls. Times come from the injected clock.
 */
export class ProviderHealth {
  private readonly failedAt = new Map<string, number>();

  constructor(private readonly clock: Clock, readonly coolDownMs = COOL_DOWN_MS) {}

  /** Failed within the cool-down. */
  cooling(owner: string, kind: ProviderKind, provider: string): boolean {
    const key = keyOf(owner, kind, provider);
    const at = this.failedAt.get(key);
    if (at === undefined) return false;
    if (this.now() - at < this.coolDownMs) return true;
    this.failedAt.delete(key);
    return false;
  }

  failed(owner: string, kind: ProviderKind, provider: string): void {
    if (this.failedAt.size >= MAX_REMEMBERED) this.forget();
    const key = keyOf(owner, kind, provider);
    this.failedAt.delete(key); // re-inserted last: the map stays in the order of the failures
    this.failedAt.set(key, this.now());
  }

  succeeded(owner: string, kind: ProviderKind, provider: string): void {
    this.failedAt.delete(keyOf(owner, kind, provider));
  }

  /** The candidates in the order to try them: those not cooling down as listed, then those that are (better late than none). */
  order<T extends { provider: string }>(owner: string, kind: ProviderKind, candidates: readonly T[]): T[] {
    const fresh = candidates.filter((c) => !this.cooling(owner, kind, c.provider));
    return [...fresh, ...candidates.filter((c) => !fresh.includes(c))];
  }

  private forget(): void {
    const now = this.now();
    for (const [key, at] of this.failedAt) if (now - at >= this.coolDownMs) this.failedAt.delete(key);
    // Still full: the oldest failures go (the map is in the order they happened).
    for (const key of this.failedAt.keys()) {
      if (this.failedAt.size < MAX_REMEMBERED) break;
      this.failedAt.delete(key);
    }
  }

  private now(): number {
    return this.clock.now().getTime();
  }
}

const keyOf = (owner: string, kind: ProviderKind, provider: string) => `${owner}\u0000${kind}:${provider}`;
