import type { Tool, ToolService } from '../../catalog/descriptors.js';
import { ConfigError } from '../../errors.js';
import type { Secrets } from '../../secrets.js';
import type { Plugin, PluginContext, PluginEvents, PluginFactory, ToolCall } from '../plugin.js';
import { AddressGuard, type Resolver } from '../../net/address-guard.js';
import { checkFileUrls } from '../dify-common/file-urls.js';
import { checkTargets, type DifyOptions } from '../dify-common/dify-tool-options.js';
import { observe } from '../dify-common/observe-stream.js';
import { withRetry } from '../dify-common/retry.js';
import { prepareDifyInvocation } from '../dify-common/prepare-invocation.js';
import { DifyDaemonClient } from '../dify-common/daemon-client.js';
import { DIFY_DAEMON_KIND, difyDaemonSchemas } from './daemon-kind.js';
import { readDifyDaemonSettings, type DifyDaemonSettings } from './settings.js';
import { validateServiceCredentials } from './validate-credentials.js';
import type { PluginFaults } from '../plugin-faults.js';
import { withFaultReport } from '../dify-common/fault-report.js';

/** Calls Dify plugin tools through a plugin daemon's dispatch API. */
export class DifyDaemonPlugin implements Plugin {
  readonly kind = DIFY_DAEMON_KIND;
  private readonly client: DifyDaemonClient;
  private readonly fileUrls: AddressGuard;

  constructor(
    private readonly service: ToolService,
    private readonly settings: DifyDaemonSettings,
    private readonly secrets: Secrets,
    private readonly faults?: PluginFaults,
    resolve?: Resolver,
    private readonly events?: PluginEvents,
  ) {
    this.client = new DifyDaemonClient({ url: settings.url, key: settings.key, tenantId: settings.tenantId });
    this.fileUrls = new AddressGuard(settings.fileUrls, resolve);
  }

  async *invoke(call: ToolCall): AsyncGenerator<string> {
    const {
      target: t,
      toolName,
      log,
      credentials,
      data,
    } = prepareDifyInvocation(this.service, call, this.secrets, 'plugin_id', (target) => ({
      plugin: DIFY_DAEMON_KIND,
      pluginId: target.pluginId,
      provider: target.provider,
      difyTool: target.tool,
    }));
    await checkFileUrls(data.tool_parameters, this.fileUrls);
    const hidden = [...Object.values(credentials), this.settings.key];
    const body = {
      user_id: (this.settings.userFromRequest ? call.user : undefined) ?? this.settings.userId,
      message_id: call.requestId,
      data,
    };
    yield* withFaultReport(
      this.service.id,
      this.faults,
      withRetry(
        (attempt) => {
          log.debug({ attempt }, 'invoking dify tool');
          return observe(this.client.invokeTool(t.pluginId as string, body, call.signal), {
            log,
            blobSink: this.settings.blobSink,
            signal: call.signal,
            toolName,
            secrets: hidden,
          });
        },
        { policy: this.settings.retry, signal: call.signal, log, onRetry: () => this.events?.count('retry') },
      ),
    );
  }
}

function settingsOrThrow(ctx: PluginContext): DifyDaemonSettings {
  const { settings, problems } = readDifyDaemonSettings(ctx.settings, ctx.secrets);
  if (problems.length > 0) throw new ConfigError(problems);
  return settings;
}

export const difyDaemonPluginFactory: PluginFactory<DifyOptions, DifyOptions> = {
  ...difyDaemonSchemas,
  async check(service: ToolService, tools: readonly Tool[], ctx: PluginContext): Promise<string[]> {
    const { problems } = readDifyDaemonSettings(ctx.settings, ctx.secrets);
    return [...problems.map((problem) => `${service.source}: plugin: ${problem}`), ...checkTargets(service, tools, ctx.secrets, 'plugin_id')];
  },
  async create(service: ToolService, ctx: PluginContext): Promise<Plugin> {
    return new DifyDaemonPlugin(service, settingsOrThrow(ctx), ctx.secrets, ctx.faults, ctx.resolve, ctx.events);
  },
  checkCredentials(service: ToolService, tools: readonly Tool[], ctx: PluginContext, signal: AbortSignal): Promise<string[]> {
    return validateServiceCredentials(service, tools, settingsOrThrow(ctx), ctx.secrets, signal);
  },
};
