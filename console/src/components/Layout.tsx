import { useEffect, useState, type ReactNode } from 'react';
import { NavLink } from 'react-router';
import { useSession } from '../session';
import { chooseTheme, onSystemTheme, savedTheme, systemTheme, type Theme } from '../theme';
import { ScopeSwitcher } from './ScopeSwitcher';

const LINKS = [
  ['/', 'Overview'],
  ['/assistants', 'Assistants'],
  ['/agents', 'Agents'],
  ['/strategies', 'Strategies'],
  ['/sip', 'SIP'],
  ['/provider-credentials', 'Providers'],
  ['/calls', 'Calls'],
  ['/deliveries', 'Webhooks'],
] as const;

export function Layout({ children }: { children: ReactNode }) {
  const session = useSession();
  const [theme, setTheme] = useState<Theme>(() => savedTheme() ?? systemTheme());
  // Until the user chooses, the system's preference decides, also when it changes.
  useEffect(() => onSystemTheme(() => setTheme(savedTheme() ?? systemTheme())), []);
  const toggle = () => {
    const next = theme === 'dark' ? 'light' : 'dark';
    chooseTheme(next);
    setTheme(next);
  };
  return (
    <>
      <a className="skip" href="#main">Skip to content</a>
      <header className="top">
        <span className="brand">Parley</span>
        <ScopeSwitcher />
        <div className="top-actions">
          <button type="button" className="ghost" onClick={toggle} aria-pressed={theme === 'dark'}>
            {theme === 'dark' ? 'Light theme' : 'Dark theme'}
          </button>
          <button type="button" className="ghost" onClick={session.signOut}>Sign out</button>
        </div>
      </header>
      <nav className="side" aria-label="Main">
        <ul>
          {LINKS.map(([to, label]) => (
            <li key={to}><NavLink to={to} end={to === '/'}>{label}</NavLink></li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        {session.scope?.organizationId ? children : <p className="note">Choose an organization above to start.</p>}
      </main>
    </>
  );
}
