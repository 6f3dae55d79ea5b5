/** Lets a test wait for a fake to reach a state, checked on every change the fake reports. */
export class Waiters {
  private readonly waiting = new Set<() => void>();

  /** Called by the fake after every change of its state. */
  changed(): void {
    for (const check of [...this.waiting]) check();
  }

  /** Resolves once predicate() holds; the timeout only fails a broken run. */
  waitFor(predicate: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
    if (predicate()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(check);
        reject(new Error(`timed out waiting for ${what}`));
      }, timeoutMs);
      const check = () => {
        if (!predicate()) return;
        clearTimeout(timer);
        this.waiting.delete(check);
        resolve();
      };
      this.waiting.add(check);
    });
  }
}
