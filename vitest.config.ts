import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'test/contract/memory-*.test.ts'],
          testTimeout: 10_000,
        },
      },
      {
        test: {
          // Needs a real Pulsar broker (PULSAR_URL / PULSAR_ADMIN_URL, default 127.0.0.1:6650 / :8080).
          name: 'integration',
          include: ['test/contract/pulsar-*.test.ts', 'test/integration/**/*.test.ts', 'test/interop/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // broker.ts: provides a broker, creates tenant tg, sets PULSAR_URL / PULSAR_ADMIN_URL; chromium.ts: a browser
          globalSetup: ['test/setup/broker.ts', 'test/setup/chromium.ts'],
        },
      },
      {
        test: {
          // Needs a Docker engine, the images and toolwire:local (scripts/containers-ci.sh, `npm run test:containers`).
          name: 'containers',
          include: ['test/containers/**/*.test.ts'],
          testTimeout: 300_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
