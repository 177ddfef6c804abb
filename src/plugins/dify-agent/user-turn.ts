/**
 * The user turn of an agent call: the context the agent gave (retrieved passages, notes), then
 * the query. Dify renders context into the system prompt, which changes the prompt's first
 * bytes on every call and defeats the model's prefix cache; here it follows the fixed prefix.
 */
export function userTurn(query: string, context: unknown): string {
  if (context === undefined || context === null || context === '') return query;
  const text = typeof context === 'string' ? context : JSON.stringify(context, null, 2);
  return `<context>\n${text}\n</context>\n\n${query}`;
}
