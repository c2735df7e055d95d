import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadConfig, type Config } from './config';
import { createLogger } from '../observability/logger';
import { startStack } from './stack';
import { secretInDataFolder } from './data-folder-secret';
import { endOfLifeWarning } from './runtime-support';

/**
 * `npm start`: one process with every role on the embedded defaults, or the
 * roles and engines the environment names.
 */
function adminKeyOf(config: Config): { key: string; generated: boolean } {
  if (config.adminApiKey) return { key: config.adminApiKey, generated: false };
  const { value, generated } = secretInDataFolder(config.dataDir, 'admin-api-key', () => `nta_${randomBytes(32).toString('base64url')}`);
  return { key: value, generated };
}

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  const runtimeWarning = endOfLifeWarning(process.version, new Date());
  // Once, at start: the service still runs, and the operator learns why it should not stay there.
  if (runtimeWarning) log.warn({ node: process.version }, runtimeWarning);
  const admin = adminKeyOf(config);
  // The set-up builds this bundle beside the compiled code; a worker without it bundles at start.
  const workflowBundlePath = config.temporal.workflowBundlePath ?? path.resolve(__dirname, '../workflow-bundle.js');
  const stack = await startStack({ ...config, adminApiKey: admin.key, temporal: { ...config.temporal, workflowBundlePath } }, log);

  if (stack.url) {
    const keyFile = path.join(config.dataDir, 'admin-api-key');
    // The key is shown once, when it is made: later starts (and their logs, kept by whatever runs them) never carry it.
    const adminLine = config.adminApiKey
      ? 'admin key: the ADMIN_API_KEY you set'
      : admin.generated
        ? `admin key (generated, shown this once): ${admin.key}  (kept in ${keyFile}, mode 0600)`
        : `admin key: the one in ${keyFile}`;
    const lines = [
      `nettel is up: ${stack.url}  (roles: ${config.roles.join(', ')}; clickhouse: ${stack.clickhouse.transport})`,
      adminLine,
      `try: curl -s -X POST ${stack.url}/v1/api-keys -H "Authorization: Bearer <admin key>"`,
    ];
    process.stdout.write(lines.join('\n') + '\n');
  }

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping');
    stack
      .stop()
      .then(() => process.exit(0))
      .catch((err) => {
        log.error({ err }, 'stop failed');
        process.exit(1);
      });
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

main().catch((err) => {
  process.stderr.write(`nettel failed to start: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
