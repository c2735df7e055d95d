import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Where the browser tests save their screenshots. Every run takes them (a
 * view that cannot render fails the test), but only a run asked to refresh
 * the docs writes them over docs/screenshots/: `UPDATE_SCREENSHOTS=1 npx jest
 * test/browser`. Otherwise they go to `$TMPDIR/nettel-screenshots`
 * (overwritten by the next run), so `npm test` leaves the checkout as it
 * found it (the images change with every run's ids and times).
 */
const folder = process.env.UPDATE_SCREENSHOTS === '1' ? path.resolve(__dirname, '../../docs/screenshots') : path.join(os.tmpdir(), 'nettel-screenshots');

export function screenshotPath(name: string): string {
  fs.mkdirSync(folder, { recursive: true });
  return path.join(folder, name);
}
