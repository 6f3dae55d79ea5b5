export type Theme = 'light' | 'dark';

// The choice is not a secret, so it may outlive the tab (unlike the token).
const KEY = 'parley.theme';
const DARK = '(prefers-color-scheme: dark)';

/** The user's saved choice; without one the stylesheet follows the system (prefers-color-scheme). */
export function savedTheme(): Theme | null {
  const saved = localStorage.getItem(KEY);
  return saved === 'light' || saved === 'dark' ? saved : null;
}

export function systemTheme(): Theme {
  return window.matchMedia(DARK).matches ? 'dark' : 'light';
}

/** Applies a saved choice at start-up; nothing to do when the system decides. */
export function applySavedTheme(): void {
  const saved = savedTheme();
  if (saved) document.documentElement.dataset.theme = saved;
}

export function chooseTheme(theme: Theme): void {
  document.documentElement.dataset.theme = theme;
  localStorage.setItem(KEY, theme);
}

/** Calls back when the system preference changes; returns the unsubscribe. */
export function onSystemTheme(callback: () => void): () => void {
  const query = window.matchMedia(DARK);
  query.addEventListener('change', callback);
  return () => query.removeEventListener('change', callback);
}
