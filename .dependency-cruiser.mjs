/**
 * The allowed directions between toolwire's rooms (docs/architecture.md), checked by
 * `npm run lint`. Each layer may import from the layers below it and never from one above,
 * so no two folders can import each other. Type-only imports count: they are arrows too.
 */

/** Top to bottom. A path is a regular expression on the file's path from the repository root. */
const LAYERS = [
  { name: 'entry', paths: ['src/main\\.ts$', 'src/index\\.ts$'] },
  { name: 'cli', paths: ['src/cli/'] },
  { name: 'assembly', paths: ['src/assembly/'] },
  { name: 'settings', paths: ['src/settings\\.ts$'] },
  { name: 'mcp-server', paths: ['src/mcp-server/'] },
  { name: 'http', paths: ['src/http/'] },
  { name: 'metrics', paths: ['src/metrics/'] },
  { name: 'worker', paths: ['src/worker/'] },
  { name: 'plugins', paths: ['src/plugins/'] },
  { name: 'client', paths: ['src/client/'] },
  { name: 'config', paths: ['src/config/'] },
  { name: 'pulsar', paths: ['src/pulsar/'] },
  { name: 'catalog', paths: ['src/catalog/'] },
  { name: 'arguments', paths: ['src/arguments/'] },
  { name: 'transport', paths: ['src/transport/'] },
  { name: 'envelope', paths: ['src/envelope/'] },
  { name: 'async', paths: ['src/async/'] },
  { name: 'secrets-logging', paths: ['src/secrets\\.ts$', 'src/logging\\.ts$'] },
  { name: 'policy', paths: ['src/policy/'] },
  { name: 'net', paths: ['src/net/'] },
  { name: 'sse-tracing', paths: ['src/sse/', 'src/tracing/'] },
  { name: 'basics', paths: ['src/errors\\.ts$', 'src/plain-object\\.ts$', 'src/redact\\.ts$', 'src/version\\.ts$'] },
];

const anyOf = (paths) => `^(${paths.join('|')})`;
const placed = anyOf(LAYERS.flatMap((l) => l.paths));

/** One rule per layer: nothing in it imports a layer above it. */
const downhill = LAYERS.slice(1).map((layer, i) => ({
  name: `${layer.name}-imports-nothing-above`,
  comment: `${layer.name} may import only the layers below it (${
    LAYERS.slice(i + 2)
      .map((l) => l.name)
      .join(', ') || 'none'
  })`,
  severity: 'error',
  from: { path: anyOf(layer.paths) },
  to: { path: anyOf(LAYERS.slice(0, i + 1).flatMap((l) => l.paths)) },
}));

export default {
  forbidden: [
    ...downhill,
    {
      name: 'every-module-has-a-layer',
      comment: 'a new folder or top-level file of src/ gets its place in LAYERS (and in docs/architecture.md)',
      severity: 'error',
      from: { path: '^src/', pathNot: placed },
      to: {},
    },
    {
      name: 'no-circular',
      comment: 'no import cycle, within a folder either',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'plugin-core-knows-no-kind',
      comment: 'plugins/*.ts (the Plugin contract, the registry...) import no plugin kind; default-registry.ts is where the kinds are listed',
      severity: 'error',
      from: { path: '^src/plugins/[^/]+\\.ts$', pathNot: '^src/plugins/default-registry\\.ts$' },
      to: { path: '^src/plugins/[^/]+/' },
    },
    {
      name: 'no-kind-imports-another',
      comment: 'a plugin kind imports its own folder, the plugin core and dify-common (the Dify kinds), no other kind',
      severity: 'error',
      from: { path: '^src/plugins/([^/]+)/' },
      to: { path: '^src/plugins/[^/]+/', pathNot: ['^src/plugins/$1/', '^src/plugins/dify-common/'] },
    },
    {
      name: 'dify-common-is-for-dify-kinds',
      comment: 'dify-common is the library the Dify kinds share: it imports no kind, and only dify-* kinds import it',
      severity: 'error',
      from: { path: '^src/plugins/', pathNot: '^src/plugins/dify-[^/]+/' },
      to: { path: '^src/plugins/dify-common/' },
    },
    {
      name: 'dify-common-imports-no-kind',
      comment: 'dify-common is below the Dify kinds',
      severity: 'error',
      from: { path: '^src/plugins/dify-common/' },
      to: { path: '^src/plugins/[^/]+/', pathNot: '^src/plugins/dify-common/' },
    },
    {
      name: 'worker-imports-no-observer',
      comment: 'metrics and tracing reach the worker as interceptors its options carry (Temporal-style), never by import from worker.ts',
      severity: 'error',
      from: { path: '^src/worker/worker\\.ts$' },
      to: { path: '^src/(metrics/|worker/tracing-interceptor\\.ts$|tracing/)' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.d\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
