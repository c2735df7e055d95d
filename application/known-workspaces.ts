import { setNewest } from '../core/bounded-map';

/**
 * Whether a workspace exists, for consumers of messages whose subject names
 * one (the rate detectors' feed): a workspace exists from its first API key
 * on (the platform admin's mint, keys-service.ts), and keys are revoked,
 * never deleted. A workspace found is kept (it cannot stop existing); one
 * not found is kept for `unknownTtlMs`, so a burst of messages naming it asks
 * ClickHouse once. Both kinds of entry are bounded, the least recently asked
 * dropped first.
 */
export interface WorkspaceDirectory {
  exists(orgId: string): Promise<boolean>;
}

export interface KnownWorkspacesConfig {
  unknownTtlMs: number;
  maxEntries: number;
}

export const defaultKnownWorkspacesConfig: KnownWorkspacesConfig = { unknownTtlMs: 10_000, maxEntries: 10_000 };

export class KnownWorkspaces implements WorkspaceDirectory {
  private readonly known = new Map<string, true>();
  private readonly unknown = new Map<string, number>();

  constructor(
    private readonly config: KnownWorkspacesConfig,
    private readonly deps: { keys: { anyOf(orgId: string): Promise<boolean> }; now?: () => number },
  ) {}

  async exists(orgId: string): Promise<boolean> {
    if (this.known.has(orgId)) {
      setNewest(this.known, orgId, true, this.config.maxEntries);
      return true;
    }
    const now = (this.deps.now ?? Date.now)();
    const refusedAt = this.unknown.get(orgId);
    if (refusedAt !== undefined && now - refusedAt < this.config.unknownTtlMs) return false;
    const found = await this.deps.keys.anyOf(orgId);
    if (found) {
      this.unknown.delete(orgId);
      setNewest(this.known, orgId, true, this.config.maxEntries);
    } else setNewest(this.unknown, orgId, now, this.config.maxEntries);
    return found;
  }
}
