import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api';
import type { components } from './schema';

export type Me = components['schemas']['Whoami'];
export const can = (me: Me, permission: string) => (me.permissions as readonly string[]).includes(permission);

export interface Loaded<T> {
  data?: T;
  error?: ApiError;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` when `deps` change, and every `refreshMs` when given; keeps the last answer while reloading. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[], refreshMs?: number): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: ApiError; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    loadRef.current().then(
      (data) => live && setState({ data, loading: false }),
      (err: unknown) => live && setState((s) => ({ data: s.data, error: asApiError(err), loading: false })),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  useEffect(() => {
    if (!refreshMs) return;
    const timer = setInterval(() => setTick((t) => t + 1), refreshMs);
    return () => clearInterval(timer);
  }, [refreshMs]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

export const asApiError = (err: unknown) => (err instanceof ApiError ? err : new ApiError(0, 'CLIENT', String(err)));

/** An error as a person reads it: what happened, and a retry for what may pass. */
export function ErrorNote({ error, retry }: { error: ApiError; retry?: () => void }) {
  const title = error.retryable ? 'The service is unavailable right now' : error.status === 401 ? 'This key was refused' : 'The request failed';
  return (
    <div class="error" role="alert">
      <strong>{title}.</strong> <span>{error.message}</span> <code>{error.code}</code>
      {error.retryable && retry ? (
        <button type="button" onClick={retry}>
          Retry
        </button>
      ) : null}
    </div>
  );
}

export function Section({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section aria-labelledby={`h-${title}`}>
      <div class="section-head">
        <h2 id={`h-${title}`}>{title}</h2>
        {actions}
      </div>
      {children}
    </section>
  );
}

export type Person = NonNullable<Me['person']>;

/** Who did something: the person's name (their key or credential on hover), or the credential alone when it stands for nobody. */
export function Who({ person, credential }: { person: Person | null | undefined; credential: string }) {
  if (!person) return <code>{credential}</code>;
  return <span class="person" title={`${person.subject}${person.email ? ` <${person.email}>` : ''} with ${credential}`}>{person.name || person.email || person.subject}</span>;
}

/** Whether the signed-in person is `person`: four eyes compares persons, whichever key each holds. */
export const isMe = (me: Me, person: Person | null | undefined, credential: string) =>
  credential === me.key_id || (!!me.person && !!person && me.person.subject === person.subject);

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString(undefined, { hour12: false }) : '—');
export const number = (n: number) => n.toLocaleString('en-US');

export function Status({ value }: { value: string }) {
  return <span class={`badge badge-${value}`}>{value.replace('_', ' ')}</span>;
}

/** Until an instant, as a person reads it: `unset` without one, `passed` once it is reached. */
export function timeUntil(instant: string | null, unset: string, passed: string): string {
  if (!instant) return unset;
  const left = Date.parse(instant) - Date.now();
  if (left <= 0) return passed;
  const minutes = Math.floor(left / 60_000);
  return minutes >= 1 ? `about ${minutes} min` : `${Math.ceil(left / 1000)} s`;
}
