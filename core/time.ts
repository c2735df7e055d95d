/** Epoch milliseconds as the API shows times: ISO 8601 in UTC. */
export const iso = (ms: number) => new Date(ms).toISOString();

/** Like `iso`, for times where 0 means "never" (expiry, revocation). */
export const isoOrNull = (ms: number) => (ms ? iso(ms) : null);
