import path from 'node:path';
import { z } from 'zod';
import { defineSettings, setting } from '../core/settings';

export const processRoles = ['api', 'stream-workers', 'temporal-worker', 'collector'] as const;
export type ProcessRole = (typeof processRoles)[number];

/** What one process runs, where it keeps its data and finds its tools, and how much it logs. */
export const processSettings = defineSettings(
  'The process',
  {
    ROLES: setting(
      z
        .string()
        .default(processRoles.join(','))
        .transform((v) => v.split(',').map((r) => r.trim()).filter(Boolean))
        .pipe(z.array(z.enum(processRoles)).min(1)),
      'the roles this process runs, comma-separated (see [install](install.md))',
    ),
    DATA_DIR: setting(z.string().default('./.data'), "engines' stores, chDB data, the generated admin key and the other generated keys"),
    LOG_LEVEL: setting(z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'), 'pino level; logs are JSON on stderr'),
    TOOLS_DIR: setting(z.string().optional(), 'where the set-up keeps the Temporal CLI, nats-server and GoFlow2 it builds', '`$XDG_CACHE_HOME/nettel/bin`, else `~/.cache/nettel/bin`'),
    XDG_CACHE_HOME: setting(z.string().optional(), 'the cache folder `TOOLS_DIR` defaults into', '`$HOME/.cache`'),
    HOME: setting(z.string().optional(), 'the home folder `XDG_CACHE_HOME` defaults into', '`/tmp`'),
    PATH: setting(z.string().default('/usr/local/bin:/usr/bin:/bin'), 'folders searched for engine binaries, then `/usr/sbin` and `/usr/local/sbin`'),
  },
  (e) => ({
    roles: e.ROLES,
    dataDir: path.resolve(e.DATA_DIR),
    logLevel: e.LOG_LEVEL,
    /** Where the set-up script keeps tools it built (the Temporal CLI); shared by every clone. */
    toolsDir: e.TOOLS_DIR ?? path.join(e.XDG_CACHE_HOME ?? path.join(e.HOME ?? '/tmp', '.cache'), 'nettel', 'bin'),
    /** Folders searched for engine binaries. */
    binPath: [...e.PATH.split(':'), '/usr/sbin', '/usr/local/sbin'],
  }),
);
