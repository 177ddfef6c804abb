import type { Tool, ToolService } from '../../catalog/descriptors.js';
import { ConfigError } from '../../errors.js';
import type { Secrets } from '../../secrets.js';
import { checkTargets, type DifyOptions } from '../dify-common/dify-tool-options.js';
import { observe } from '../dify-common/observe-stream.js';
import { withRetry } from '../dify-common/retry.js';
import { prepareDifyInvocation } from '../dify-common/prepare-invocation.js';
import type { Plugin, PluginContext, PluginEvents, PluginFactory, ToolCall } from '../plugin.js';
import { AddressGuard, type Resolver } from '../../net/address-guard.js';
import { checkFileUrls } from '../dify-common/file-urls.js';
import { DIFY_SLIM_KIND, DifySlimSetting, difySlimSchemas } from './slim-kind.js';
import { readDifySlimSettings, SlimMode, type DifySlimSettings } from './settings.js';
import type { Execution } from '../../policy/exec-policy.js';
import { slimItems } from './slim-items.js';
import { runSlim } from './slim-process.js';
import type { PluginFaults } from '../plugin-faults.js';
import { withFaultReport } from '../dify-common/fault-report.js';

const LOCAL_HANG_HINT = 'in slim local mode a plugin cannot call back into Dify, and one that tries waits until it is stopped';

/** Runs Dify plugin tools with the slim binary, one process per invocation. */
export class DifySlimPlugin implements Plugin {
  readonly kind = DIFY_SLIM_KIND;
  private readonly fileUrls: AddressGuard;

  constructor(
    private readonly service: ToolService,
    private readonly settings: DifySlimSettings,
    private readonly secrets: Secrets,
    private readonly faults?: PluginFaults,
    resolve?: Resolver,
    private readonly events?: PluginEvents,
  ) {
    this.fileUrls = new AddressGuard(settings.fileUrls, resolve);
  }

  async *invoke(call: ToolCall): AsyncGenerator<string> {
    const {
      target: t,
      toolName,
      log,
      credentials,
      data,
    } = prepareDifyInvocation(this.service, call, this.secrets, 'plugin_unique_identifier', (target) => ({
      plugin: DIFY_SLIM_KIND,
      plugin_unique_identifier: target.uniqueIdentifier,
      provider: target.provider,
      difyTool: target.tool,
    }));
    await checkFileUrls(data.tool_parameters, this.fileUrls);
    const hidden = [...Object.values(credentials), ...this.settings.secrets];
    const payload = JSON.stringify({
      ...(this.settings.tenantId ? { tenant_id: this.settings.tenantId } : {}),
      user_id: (this.settings.userFromRequest ? call.user : undefined) ?? this.settings.userId,
      data,
    });
    const s = this.settings;
    const timeoutMs = s.timeoutMs ?? call.timeoutMs;
    // Slim's inactivity timer (reset by each heartbeat of the SDK): above ours, so that a run
    // gone quiet is ended by our bound, with our message, before slim's exits without a word.
    const env = s.mode === 'local' ? { ...s.env, SLIM_MAX_EXECUTION_TIMEOUT: String(Math.ceil(timeoutMs / 1000) + 5) } : s.env;
    const attempts = withRetry(
      (attempt) => {
        log.debug({ attempt, mode: s.mode }, 'running slim');
        const outputs = runSlim({
          path: s.path,
          args: ['-id', t.uniqueIdentifier as string, '-action', 'invoke_tool'],
          env,
          stdin: payload,
          signal: call.signal,
          timeoutMs,
          killGraceMs: s.killGraceMs,
          log,
          timeoutHint: s.mode === 'local' ? LOCAL_HANG_HINT : undefined,
          ...(s.cwd !== undefined ? { cwd: s.cwd } : {}),
          ...(s.uid !== undefined ? { uid: s.uid } : {}),
          ...(s.gid !== undefined ? { gid: s.gid } : {}),
        });
        return observe(slimItems(outputs, s.mode, log, hidden), { log, blobSink: s.blobSink, signal: call.signal, toolName, secrets: hidden });
      },
      { policy: s.retry, signal: call.signal, log, onRetry: () => this.events?.count('retry') },
    );
    yield* withFaultReport(this.service.id, this.faults, attempts);
  }
}

export const difySlimPluginFactory: PluginFactory<DifyOptions, DifyOptions> = {
  ...difySlimSchemas,
  /** In local mode slim fetches the plugin a descriptor names and runs its code here; in remote mode the daemon runs it. */
  async executes(service, tools, ctx): Promise<Execution[]> {
    if ((ctx.settings[DifySlimSetting.Mode]?.trim() || SlimMode.Remote) !== SlimMode.Local) return [];
    const own = service.plugin.options.plugin_unique_identifier;
    const found: Execution[] = own === undefined ? [] : [{ type: 'slim-plugin', where: `${service.source}: plugin.plugin_unique_identifier`, id: own }];
    for (const t of tools) {
      const id = t.pluginOptions.plugin_unique_identifier;
      if (id !== undefined) found.push({ type: 'slim-plugin', where: `${t.source}: plugin-options.plugin_unique_identifier`, id });
    }
    return found;
  },
  async check(service: ToolService, tools: readonly Tool[], ctx: PluginContext): Promise<string[]> {
    const { problems } = readDifySlimSettings(ctx.settings, ctx.secrets);
    return [...problems.map((problem) => `${service.source}: plugin: ${problem}`), ...checkTargets(service, tools, ctx.secrets, 'plugin_unique_identifier')];
  },
  async create(service: ToolService, ctx: PluginContext): Promise<Plugin> {
    const { settings, problems } = readDifySlimSettings(ctx.settings, ctx.secrets);
    if (problems.length > 0) throw new ConfigError(problems);
    return new DifySlimPlugin(service, settings, ctx.secrets, ctx.faults, ctx.resolve, ctx.events);
  },
};
