// Bundles a test Worker as wrangler bundles for workerd (esbuild, the `workerd` condition): the SDK client bundle
// (tests/workerd/sdk-entry.mjs) and the Worker itself, its bare imports resolved (the package's `zod`) and its
// .wasm modules left as imports of the package's files (CompiledWasm). `modules` is the Miniflare part that loads it.
import { relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export const root = fileURLToPath(new URL('../../', import.meta.url));
const asWrangler = { bundle: true, format: 'esm', platform: 'browser', conditions: ['workerd', 'worker', 'browser'], logLevel: 'error' };

/** Builds `tests/workerd/<entry>` into `tests/workerd/<outfile>` (and the SDK bundle it imports). Returns its path. */
export async function bundleWorker(entry, outfile) {
  await build({ ...asWrangler, entryPoints: [`${root}tests/workerd/sdk-entry.mjs`], outfile: `${root}tests/workerd/sdk-bundle.js` });
  await build({
    ...asWrangler,
    entryPoints: [`${root}tests/workerd/${entry}`],
    outfile: `${root}tests/workerd/${outfile}`,
    plugins: [{
      name: 'wasm-modules',
      setup(b) {
        b.onResolve({ filter: /\.wasm$/ }, (args) => ({
          path: relative(`${root}tests/workerd`, resolve(args.resolveDir, args.path)),
          external: true,
        }));
      },
    }],
  });
  return `${root}tests/workerd/${outfile}`;
}

/** Miniflare's module options for a bundle made by `bundleWorker`. */
export const modules = {
  modules: true,
  modulesRoot: root,
  modulesRules: [
    { type: 'ESModule', include: ['**/*.js', '**/*.mjs'] },
    { type: 'CompiledWasm', include: ['**/*.wasm'] },
  ],
  compatibilityDate: '2026-04-01',
};
