import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router';
import { App } from './App';
import { DocumentProvider } from './api/document';
import { restoreSession, SessionProvider } from './session';
import { applySavedTheme } from './theme';
import './styles.css';

applySavedTheme();

const initial = await restoreSession();
createRoot(document.getElementById('root') as HTMLElement).render(
  <StrictMode>
    <BrowserRouter basename="/console">
      <SessionProvider initial={initial}>
        <DocumentProvider>
          <App />
        </DocumentProvider>
      </SessionProvider>
    </BrowserRouter>
  </StrictMode>,
);
