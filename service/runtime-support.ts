/**
 * Whether the Node.js line this process runs on still gets security fixes.
 * The end dates are the Node.js release schedule's (nodejs/Release): even
 * lines end 30 months after their release as LTS, odd lines after about 8
 * months. The service keeps running on an ended line (a machine's own node
 * may be older than the one CI and the image use), and says so once at start.
 */
const endOfLife: Record<number, string> = {
  18: '2025-04-30',
  19: '2023-06-01',
  20: '2026-04-30',
  21: '2024-06-01',
  22: '2027-04-30',
  23: '2025-06-01',
  24: '2028-04-30',
  25: '2026-06-01',
  26: '2029-04-30',
};

/** The lines CI and the image run, which the README names as tested. */
export const testedNodeLines = [24] as const;

/**
 * The warning for a runtime past its end of life, or undefined while it is
 * supported. A line older than the table is ended; one newer is taken as
 * supported (it is newer than this code).
 */
export function endOfLifeWarning(version: string, now: Date): string | undefined {
  const major = Number(/^v?(\d+)\./.exec(version)?.[1]);
  if (!Number.isInteger(major)) return undefined;
  const known = Object.keys(endOfLife).map(Number);
  const ended = endOfLife[major] ?? (major < Math.min(...known) ? '' : undefined);
  if (ended === undefined || (ended !== '' && now.getTime() < Date.parse(`${ended}T00:00:00Z`))) return undefined;
  const since = ended ? ` on ${ended}` : '';
  return `node ${version} reached its end of life${since} and receives no security fixes: run node ${testedNodeLines.join(' or ')}, the tested line`;
}
