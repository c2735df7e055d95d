import { bundleWorkflowCode, type Logger } from '@temporalio/worker';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Writes dist/workflow-bundle.js, the prebuilt bundle production workers
 * load, so that starting a worker does not run webpack. Run by the set-up.
 */
export const workflowBundlePath = path.resolve(__dirname, '../workflow-bundle.js');

/** Bundles workflows/ into `file`; the test set-up builds one per run with it, as the set-up builds dist's. */
export async function writeWorkflowBundle(file: string = workflowBundlePath, logger?: Logger): Promise<void> {
  const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('../workflows'), logger });
  fs.writeFileSync(file, code);
}

if (require.main === module) {
  writeWorkflowBundle().catch((err) => {
    process.stderr.write(`unable to bundle workflows: ${(err as Error).stack}\n`);
    process.exit(1);
  });
}
