import { useCallback, useEffect, useRef, useState } from 'react';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` when its deps change and on reload(); an answer that arrives after a newer request is dropped. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: undefined, loading: true });
  const [tick, setTick] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const run = ++latest.current;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => run === latest.current && setState({ data, error: undefined, loading: false }),
      (error: unknown) => run === latest.current && setState({ data: undefined, error, loading: false }),
    );
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  return { ...state, reload };
}

/** Sets the document title, so each page is told apart by screen readers and the history. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · Parley`;
  }, [title]);
}
