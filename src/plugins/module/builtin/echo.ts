import { defineTool } from '../module-tool.js';

/**
 * Echo: answers `text` (or the arguments' JSON), for tests and benchmarks. With `chunks: n`
 * it yields the text n times, which exercises stream mode.
 */
export default defineTool(({ arguments: args }) => {
  const text = typeof args['text'] === 'string' ? args['text'] : JSON.stringify(args);
  const n = typeof args['chunks'] === 'number' ? Math.max(1, Math.min(10_000, Math.trunc(args['chunks']))) : 0;
  if (n === 0) return text;
  return (async function* () {
    for (let i = 0; i < n; i++) yield text;
  })();
});
