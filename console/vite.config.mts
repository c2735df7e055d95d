import { defineConfig } from 'vite';

// Preact through TypeScript's automatic JSX runtime (tsconfig's jsxImportSource): no Babel, no plugin.
// Built by scripts/setup.mjs into dist/console, which the API serves at `/`.
export default defineConfig({
  base: '/',
  build: {
    outDir: '../dist/console',
    emptyOutDir: true,
    // No inline polyfill script: the CSP allows scripts from this origin only.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    target: 'es2022',
    // The visualize page's chunk (ECharts) is loaded only when that page is opened.
    chunkSizeWarningLimit: 700,
  },
});
