import { z } from 'zod';
import { certificatePair, defineSettings, invalidSetting, optionalAddress, optionalText, port, setting, type SettingValues } from '../core/settings';
import type { TemporalTls } from './temporal-client';

const access = {
  TEMPORAL_ADDRESS: setting(optionalAddress(), 'Temporal frontend, e.g. `temporal-frontend:7233`', 'embedded'),
  TEMPORAL_TLS_CA_FILE: setting(optionalText(), "TLS to Temporal: the frontend's CA"),
  TEMPORAL_TLS_CERT_FILE: setting(optionalText(), 'a client certificate for mutual TLS to Temporal, with `TEMPORAL_TLS_KEY_FILE`'),
  TEMPORAL_TLS_KEY_FILE: setting(optionalText(), "the client certificate's key, for mutual TLS to Temporal"),
  TEMPORAL_TLS_SERVER_NAME: setting(optionalText(), "the name the frontend's certificate gives, when it is not the address's host"),
  TEMPORAL_API_KEY: setting(optionalText(), 'an API key to Temporal instead of a client certificate (it implies TLS)'),
};

/** Mutual TLS or an API key (which implies TLS) to a Temporal frontend; the embedded dev server takes neither. */
function temporalAccessOf(e: SettingValues<typeof access>): { tls?: TemporalTls; apiKey?: string } {
  certificatePair('TEMPORAL', e.TEMPORAL_TLS_CERT_FILE, e.TEMPORAL_TLS_KEY_FILE);
  const anyTls = e.TEMPORAL_TLS_CA_FILE || e.TEMPORAL_TLS_CERT_FILE || e.TEMPORAL_TLS_SERVER_NAME;
  const tls = anyTls
    ? { caFile: e.TEMPORAL_TLS_CA_FILE, certFile: e.TEMPORAL_TLS_CERT_FILE, keyFile: e.TEMPORAL_TLS_KEY_FILE, serverName: e.TEMPORAL_TLS_SERVER_NAME }
    : undefined;
  if ((tls || e.TEMPORAL_API_KEY) && !e.TEMPORAL_ADDRESS) throw invalidSetting('TEMPORAL_TLS_* and TEMPORAL_API_KEY need a TEMPORAL_ADDRESS; the embedded dev server takes neither');
  return { tls, apiKey: e.TEMPORAL_API_KEY };
}

/** Where Temporal is and how to reach it, the governance workflows' queue, and the embedded dev server. */
export const temporalSettings = defineSettings(
  'Temporal',
  {
    ...access,
    TEMPORAL_NAMESPACE: setting(z.string().default('default'), 'Temporal namespace'),
    TEMPORAL_TASK_QUEUE: setting(z.string().default('nettel-governance'), 'task queue of the governance workflows'),
    TEMPORAL_WORKFLOW_BUNDLE: setting(
      optionalText(),
      'the prebuilt workflow bundle (the set-up builds it); without one the worker bundles `workflows/` at start',
      '`dist/workflow-bundle.js`',
    ),
    TEMPORAL_CLI: setting(optionalText(), 'the `temporal` binary for the embedded dev server', 'on `PATH`'),
    EMBEDDED_TEMPORAL_PORT: setting(port().default(17233), 'port of the embedded Temporal dev server'),
    EMBEDDED_TEMPORAL_UI_PORT: setting(port().default(18233), "port of the embedded Temporal dev server's Web UI, on 127.0.0.1"),
    TEMPORAL_UI_URL: setting(optionalAddress(), 'the Temporal Web UI the console links operators to', 'the embedded UI'),
  },
  (e) => ({
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      /** Mutual TLS, or an API key (over TLS), to TEMPORAL_ADDRESS. */
      ...temporalAccessOf(e),
      namespace: e.TEMPORAL_NAMESPACE,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      cli: e.TEMPORAL_CLI,
      /** A prebuilt workflow bundle; without one the worker bundles workflows/ when it starts. */
      workflowBundlePath: e.TEMPORAL_WORKFLOW_BUNDLE,
      embeddedPort: e.EMBEDDED_TEMPORAL_PORT,
      /** The embedded dev server's Web UI port (loopback only). */
      embeddedUiPort: e.EMBEDDED_TEMPORAL_UI_PORT,
      /** The Web UI the console links operators to: TEMPORAL_UI_URL, else the embedded server's. */
      uiUrl: e.TEMPORAL_UI_URL ?? (e.TEMPORAL_ADDRESS ? undefined : `http://127.0.0.1:${e.EMBEDDED_TEMPORAL_UI_PORT}`),
    },
  }),
);
