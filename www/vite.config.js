// The playground is built by Vite from the package as users install it (`mcp-retry-policy/client`,
// resolved through node_modules and the package's exports map), which proves the package bundles.
import { defineConfig } from 'vite';
import { fileURLToPath } from 'node:url';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../target/www', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
  },
});
