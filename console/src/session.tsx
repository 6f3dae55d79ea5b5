import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react';
import { createApi, type Api } from './api/client';
import type { Me, Scope } from './api/types';

// sessionStorage only: the token leaves with the tab, is never in a URL, never in localStorage.
const TOKEN_KEY = 'parley.token';
const SCOPE_KEY = 'parley.scope';

export interface Session {
  token: string;
  me: Me;
  api: Api;
  scope: Scope | null;
  setScope: (scope: Scope | null) => void;
  signOut: () => void;
  /** Bumped when a page creates or renames an organization, so the picker reads the list again. */
  organizationsVersion: number;
  organizationsChanged: () => void;
}

interface SessionState {
  session: Session | null;
  signIn: (token: string) => Promise<void>;
}

const SessionContext = createContext<SessionState | null>(null);

function readScope(): Scope | null {
  try {
    const value = JSON.parse(sessionStorage.getItem(SCOPE_KEY) ?? 'null') as Scope | null;
    return value && typeof value.vendorId === 'string' && typeof value.organizationId === 'string' ? value : null;
  } catch {
    return null;
  }
}

/** The scope a token is fixed to: an organization token has no choice to make. */
function fixedScope(me: Me): Scope | null {
  return me.vendorId && me.organizationId ? { vendorId: me.vendorId, organizationId: me.organizationId } : null;
}

export function SessionProvider({ initial, children }: { initial: { token: string; me: Me } | null; children: ReactNode }) {
  const [auth, setAuth] = useState(initial);
  const [scope, setScopeState] = useState<Scope | null>(() => (initial ? fixedScope(initial.me) ?? readScope() : null));
  const [organizationsVersion, setOrganizationsVersion] = useState(0);
  const organizationsChanged = useCallback(() => setOrganizationsVersion((n) => n + 1), []);

  const signOut = useCallback(() => {
    sessionStorage.removeItem(TOKEN_KEY);
    sessionStorage.removeItem(SCOPE_KEY);
    setAuth(null);
    setScopeState(null);
  }, []);

  const api = useMemo(() => createApi(() => auth?.token ?? null, signOut), [auth, signOut]);

  const setScope = useCallback((next: Scope | null) => {
    if (next) sessionStorage.setItem(SCOPE_KEY, JSON.stringify(next));
    else sessionStorage.removeItem(SCOPE_KEY);
    setScopeState(next);
  }, []);

  const signIn = useCallback(async (token: string) => {
    const me = await whoIs(token);
    sessionStorage.setItem(TOKEN_KEY, token);
    setAuth({ token, me });
    setScopeState(fixedScope(me) ?? readScope());
  }, []);

  const value = useMemo<SessionState>(() => ({
    session: auth ? { token: auth.token, me: auth.me, api, scope, setScope, signOut, organizationsVersion, organizationsChanged } : null,
    signIn,
  }), [auth, api, scope, setScope, signOut, signIn, organizationsVersion, organizationsChanged]);
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export async function whoIs(token: string): Promise<Me> {
  return createApi(() => token, () => {}).getMe();
}

/** The token kept by this tab, checked against the API (a revoked or expired one is dropped). */
export async function restoreSession(): Promise<{ token: string; me: Me } | null> {
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (!token) return null;
  try {
    return { token, me: await whoIs(token) };
  } catch {
    sessionStorage.removeItem(TOKEN_KEY);
    return null;
  }
}

export function useSessionState(): SessionState {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSessionState outside SessionProvider');
  return value;
}

export function useSession(): Session {
  const { session } = useSessionState();
  if (!session) throw new Error('useSession without a session');
  return session;
}

/** The organization the pages work in; pages that need one are only shown once it is chosen. */
export function useScope(): Scope {
  const { scope } = useSession();
  if (!scope?.organizationId) throw new Error('useScope without an organization');
  return scope;
}

/** The vendor the pages work in: the token's own, or the one the platform admin chose ('' before that). */
export function useVendorId(): string {
  const { me, scope } = useSession();
  return me.vendorId ?? scope?.vendorId ?? '';
}

export type Permission = Me['permissions'][number];

/** Whether the token may do this, from GET /api/v1/me: the console offers only what the API would allow. */
export function useCan(): (permission: Permission) => boolean {
  const { me } = useSession();
  return (permission) => me.permissions.includes(permission);
}
