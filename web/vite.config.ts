import { defineConfig } from 'vite';

// Static files for the gateway: index.html at the root, hashed (immutable) files under assets/.
export default defineConfig({
  base: '/',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    target: 'es2020',
    sourcemap: false,
    assetsInlineLimit: 0,
  },
  test: { include: ['test/**/*.test.ts'], environment: 'node' },
} as any);
