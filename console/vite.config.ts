import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// Served by the service at /console; the manifest tells the bundle budget test what the first page loads.
export default defineConfig({
  base: '/console/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    manifest: true,
    sourcemap: false,
    // No inline assets or module-preload script: the CSP allows scripts from files only.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
  server: { proxy: { '/api': { target: 'http://127.0.0.1:8080', ws: true }, '/openapi.json': 'http://127.0.0.1:8080' } },
});
