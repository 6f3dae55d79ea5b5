import { useEffect, useState, type ReactNode } from 'react';
import { NavLink, useLocation } from 'react-router';
import { useCan, useSession, useVendorId, type Permission } from '../session';
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

/** Pages about the vendor rather than one organization: offered to tokens that may read them, and open before an organization is chosen. */
const VENDOR_LINKS: readonly (readonly [string, string, Permission])[] = [
  ['/organizations', 'Organizations', 'organizations:read'],
  ['/api-tokens', 'API tokens', 'tokens:read'],
];

export function Layout({ children }: { children: ReactNode }) {
  const session = useSession();
  const can = useCan();
  const vendorId = useVendorId();
  const { pathname } = useLocation();
  const vendorPage = VENDOR_LINKS.some(([to]) => pathname === to);
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
          {VENDOR_LINKS.filter(([, , permission]) => can(permission)).map(([to, label]) => (
            <li key={to}><NavLink to={to}>{label}</NavLink></li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        {session.scope?.organizationId || (vendorPage && vendorId) ? children : <p className="note">Choose an organization above to start.</p>}
      </main>
    </>
  );
}
