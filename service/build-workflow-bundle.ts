import { bundleWorkflowCode } from '@temporalio/worker';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Writes dist/workflow-bundle.js, the prebuilt bundle production workers
 * load, so that starting a worker does not run webpack. Run by the set-up.
 */
export const workflowBundlePath = path.resolve(__dirname, '../workflow-bundle.js');

async function build(): Promise<void> {
  const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('../workflows') });
  fs.writeFileSync(workflowBundlePath, code);
}

if (require.main === module) {
  build().catch((err) => {
    process.stderr.write(`unable to bundle workflows: ${(err as Error).stack}\n`);
    process.exit(1);
  });
}
