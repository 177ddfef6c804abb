/** Tools that ship with toolwire, loaded on first use. */
export const BUILTIN_TOOLS: Record<string, () => Promise<Record<string, unknown>>> = {
  joke: () => import('./joke.js'),
  calculator: () => import('./calculator.js'),
  time: () => import('./time.js'),
  echo: () => import('./echo.js'),
};
