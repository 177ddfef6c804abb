/** Why slim's local mode cannot run a strategy (dify-plugin-daemon pkg/slim/local.go at bdb5642a). */
export const SLIM_LOCAL_REFUSAL =
  "slim's local mode cannot run an agent strategy: it handles only the plugin's stream, end and error session messages and closes the plugin's stdin after the request, so the strategy's model and tool calls would never be answered (it would hang until the timeout); run the strategy on a plugin daemon of toolwire's own (DIFY_AGENT_DAEMON_URL)";

/** Descriptor keys that ask for slim, as a dify-slim descriptor or a slim-minded author writes them. */
export const SLIM_KEYS: ReadonlySet<string> = new Set(['runtime', 'slim_mode']);

/** The refusal of a dify-agent descriptor that asks for slim (`keys`: the unknown keys it has). */
export function slimDescriptorRefusal(keys: readonly string[]): string {
  return `${keys.map((key) => JSON.stringify(key)).join(', ')}: a descriptor cannot ask for slim. ${SLIM_LOCAL_REFUSAL}`;
}
