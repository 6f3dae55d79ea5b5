import { lazy, Suspense } from 'react';
import { Navigate, Route, Routes, useLocation } from 'react-router';
import { Layout } from './components/Layout';
import { SignIn } from './pages/SignIn';
import { useSessionState } from './session';

// Every page is its own chunk: the first load is the shell and the sign-in form only.
const Overview = lazy(() => import('./pages/Overview'));
const AssistantList = lazy(() => import('./pages/AssistantList'));
const AssistantPage = lazy(() => import('./pages/AssistantPage'));
const History = lazy(() => import('./pages/History'));
const Tests = lazy(() => import('./pages/Tests'));
const Tasks = lazy(() => import('./pages/Tasks'));
const Strategies = lazy(() => import('./pages/Strategies'));
const StrategyPage = lazy(() => import('./pages/StrategyPage'));
const Sip = lazy(() => import('./pages/Sip'));
const Providers = lazy(() => import('./pages/Providers'));
const Calls = lazy(() => import('./pages/Calls'));
const CallPage = lazy(() => import('./pages/CallPage'));
const Deliveries = lazy(() => import('./pages/Deliveries'));
const Organizations = lazy(() => import('./pages/Organizations'));
const Tokens = lazy(() => import('./pages/Tokens'));

export function App() {
  const { session } = useSessionState();
  const location = useLocation();
  if (!session) {
    return (
      <Routes>
        <Route path="/signin" element={<SignIn />} />
        {/* After signing in, the signed-in /signin route sends the user back to where they were going. */}
        <Route path="*" element={<Navigate to="/signin" replace state={{ from: location.pathname + location.search }} />} />
      </Routes>
    );
  }
  return (
    <Layout>
      <Suspense fallback={<p role="status">Loading…</p>}>
        <Routes>
          <Route path="/" element={<Overview />} />
          <Route path="/signin" element={<Navigate to={(location.state as { from?: string } | null)?.from ?? '/'} replace />} />
          <Route path="/assistants" element={<AssistantList kind="assistant" />} />
          <Route path="/assistants/:id" element={<AssistantPage kind="assistant" />} />
          <Route path="/assistants/:id/history" element={<History kind="assistant" />} />
          <Route path="/assistants/:id/tests" element={<Tests kind="assistant" />} />
          <Route path="/agents" element={<AssistantList kind="agent" />} />
          <Route path="/agents/:id" element={<AssistantPage kind="agent" />} />
          <Route path="/agents/:id/history" element={<History kind="agent" />} />
          <Route path="/agents/:id/tests" element={<Tests kind="agent" />} />
          <Route path="/agents/:id/tasks" element={<Tasks />} />
          <Route path="/strategies" element={<Strategies />} />
          <Route path="/strategies/:id" element={<StrategyPage />} />
          <Route path="/sip" element={<Sip />} />
          <Route path="/provider-credentials" element={<Providers />} />
          <Route path="/calls" element={<Calls />} />
          <Route path="/calls/:id" element={<CallPage />} />
          <Route path="/deliveries" element={<Deliveries />} />
          <Route path="/organizations" element={<Organizations />} />
          <Route path="/api-tokens" element={<Tokens />} />
          <Route path="*" element={<p>There is no such page. <a href="/console/">Go to the overview</a>.</p>} />
        </Routes>
      </Suspense>
    </Layout>
  );
}
