export type Theme = 'light' | 'dark';

// The choice is not a secret, so it may outlive the tab (unlike the token).
const KEY = 'parley.theme';

/** The saved choice, else the system's preference. */
export function initialTheme(): Theme {
  const saved = localStorage.getItem(KEY);
  if (saved === 'light' || saved === 'dark') return saved;
  return window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

export function applyTheme(theme: Theme, remember: boolean): void {
  document.documentElement.dataset.theme = theme;
  if (remember) localStorage.setItem(KEY, theme);
}
