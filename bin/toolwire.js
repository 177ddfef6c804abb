#!/usr/bin/env node
/* global console, process */
// Thin launcher: the compiled CLI lives in dist/ (built by `npm install` / `npm run build`).
import('../dist/main.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/main.js')) {
    console.error('toolwire is not built yet: run `npm run build` (npm install does it too)');
    process.exit(1);
  }
  throw err;
});
