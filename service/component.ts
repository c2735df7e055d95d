import type { Logger } from '../observability/logger';

/** The contract every component keeps: a constructor that does no work, then start and stop. */
export interface Component {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** A component whose start is one step of wiring (a migration, a topology) and whose stop has nothing to undo. */
export const startStep = (start: () => Promise<unknown>): Component => ({
  start: async () => {
    await start();
  },
  stop: () => Promise.resolve(),
});

/**
 * Starts components in order and stops the started ones in reverse. A start
 * that fails stops everything started before it, so no caller is left holding
 * a half-built stack.
 */
export class Lifecycle {
  private readonly started: Component[] = [];

  constructor(private readonly log: Logger) {}

  async startAll(components: readonly Component[]): Promise<void> {
    for (const component of components) {
      await component.start();
      this.started.push(component);
    }
  }

  async stopAll(): Promise<void> {
    while (this.started.length) {
      const component = this.started.pop()!;
      await component.stop().catch((err) => this.log.error({ err }, 'component failed to stop'));
    }
  }
}
