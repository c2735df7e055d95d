import { z } from 'zod';

/**
 * The environment variables a component reads, declared beside it: each with
 * its rule and default (a zod schema) and one line for the configuration
 * reference. service/config.ts composes every component's settings into one
 * schema, read once; docs/configuration.md's table is generated from them.
 */
export interface SettingDoc {
  /** What the variable sets, as the configuration reference says it (markdown, one line). */
  description: string;
  /** What an unset variable means, where that is not a value of its own ("embedded", "generated"). */
  whenUnset?: string;
}

/** The reference's line of each declared variable, looked up by its schema. */
export const settingDocs = z.registry<SettingDoc>();

/** A variable: its schema (rule and default) carrying its documentation. */
export function setting<S extends z.ZodType>(schema: S, description: string, whenUnset?: string): S {
  // A copy of its own: a schema shared by several variables must not share their documentation.
  const own = schema.clone();
  settingDocs.add(own, whenUnset === undefined ? { description } : { description, whenUnset });
  return own;
}

/** The values a shape of settings parses to. */
export type SettingValues<Shape extends z.ZodRawShape> = z.infer<z.ZodObject<Shape>>;

/** A component's settings: a title for the reference, the variables, and how their values make its typed configuration. */
export interface Settings<Shape extends z.ZodRawShape, In, Out> {
  title: string;
  shape: Shape;
  configOf: (values: In) => Out;
}

/**
 * Declares a component's settings. `configOf` takes the parsed values of
 * these variables (and may ask for others, which the composed schema holds).
 */
export function defineSettings<Shape extends z.ZodRawShape, Out, In extends SettingValues<Shape> = SettingValues<Shape>>(
  title: string,
  shape: Shape,
  configOf: (values: In) => Out,
): Settings<Shape, In, Out> {
  for (const [name, schema] of Object.entries(shape)) {
    if (!settingDocs.has(schema)) throw new Error(`${name}: declare it with setting(), which carries its line of the configuration reference`);
  }
  return { title, shape, configOf };
}

/** The defaults a component's settings give: its configuration with no variable set. */
export function defaultsOf<Shape extends z.ZodRawShape, Out>(settings: Settings<Shape, SettingValues<Shape>, Out>): Out {
  return settings.configOf(z.object(settings.shape).parse({}));
}

/** A configuration error, naming the variables at fault. */
export function invalidSetting(message: string): Error {
  return new Error(`invalid configuration: ${message}`);
}

/** An unset or empty variable both mean "not given". */
const blankAsUnset = (value: unknown) => (typeof value === 'string' && value.trim() === '' ? undefined : value);

/** Text that may be left unset (or empty). */
export const optionalText = () => z.preprocess(blankAsUnset, z.string().optional());

/** An engine's address that may be left unset (or empty): unset, the embedded engine. */
export const optionalAddress = () => z.preprocess(blankAsUnset, z.string().trim().optional());

/** A secret that may be left unset (or empty), and is refused when shorter than `minLength`. */
export const optionalSecret = (name: string, minLength: number) =>
  z.preprocess(blankAsUnset, z.string().min(minLength, `${name} must be at least ${minLength} characters`).optional());

/** A comma-separated list; empty by default. */
export const commaList = () =>
  z
    .string()
    .default('')
    .transform((v) => v.split(',').map((item) => item.trim()).filter(Boolean));

/** An integer of at least `min` (and at most `max`, when given), read from its text. */
export const integer = (min: number, max?: number) => {
  const atLeast = z.coerce.number().int().min(min);
  return max === undefined ? atLeast : atLeast.max(max);
};

/** A TCP or UDP port a process listens on (0, where allowed, picks a free one). */
export const port = (min: 0 | 1 = 1) => integer(min, 65535);

/** A client certificate comes with its key: one without the other is a mistake, named. */
export function certificatePair(prefix: string, cert: string | undefined, key: string | undefined): void {
  if (Boolean(cert) !== Boolean(key)) throw invalidSetting(`${prefix}_TLS_CERT_FILE and ${prefix}_TLS_KEY_FILE: set both for mutual TLS, or neither`);
}
