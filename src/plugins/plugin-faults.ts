/**
 * Faults of the worker's own making that a plugin found while serving (a backend refusing
 * the worker's key): no agent can fix them, so readiness shows them until a call succeeds.
 */
export interface PluginFaults {
  set(service: string, problem: string): void;
  clear(service: string): void;
}

export interface PluginFault {
  readonly service: string;
  readonly problem: string;
  readonly since: string;
}

export class PluginFaultBoard implements PluginFaults {
  private readonly faults = new Map<string, PluginFault>();

  set(service: string, problem: string): void {
    const known = this.faults.get(service);
    if (known?.problem === problem) return;
    this.faults.set(service, { service, problem, since: new Date().toISOString() });
  }

  clear(service: string): void {
    this.faults.delete(service);
  }

  list(): PluginFault[] {
    return [...this.faults.values()];
  }
}
