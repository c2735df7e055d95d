import { localNatsServer } from '../../engines/engines';
import type { LocalProcess } from '../../engines/local-process';
import type { Logger } from '../../observability/logger';
import { loadConfig } from '../../service/config';

/**
 * Every test file's streams share one server, and each test stack's streams reserve about 2 GiB of the
 * store's bound while they exist (a bound, not bytes written): room for many stacks at once.
 */
const testMaxFileStoreBytes = 64 * 1024 ** 3;

/** A nats-server as the embedded default runs it (the set-up's 2.15.2, syncing always), on `port` with its store in `dir`. */
export function testNatsServer(dir: string, port: number, log: Logger, maxFileStoreBytes = testMaxFileStoreBytes): LocalProcess {
  const config = loadConfig(process.env);
  return localNatsServer({ dir, port, binPath: config.binPath, toolsDir: config.toolsDir, server: config.nats.server, maxFileStoreBytes }, log);
}
