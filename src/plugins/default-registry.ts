import { modulePluginFactory } from './module/module-plugin.js';
import { PluginRegistry } from './registry.js';

/** Every plugin kind that ships with toolwire. */
export function defaultRegistry(): PluginRegistry {
  return new PluginRegistry().register(modulePluginFactory);
}
