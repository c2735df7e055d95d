import { parseAddressRange } from '../flow-query';
import {
  exporterFields, interfaceFields, maxValueLength, type Attribute, type ClassField, type Condition, type Decision,
  type ExporterField, type InterfaceField, type Operand, type Rule,
} from './rules';

/** What rules read of an exporter. */
export interface ExporterAttributes {
  name: string;
  /** Its address as normalized text (core/exporter.ts). */
  address: string;
}

/** What rules read of an interface: its SNMP index, ifName, ifAlias and ifHighSpeed (Mbit/s, 0 when unknown). */
export interface InterfaceAttributes {
  index: number;
  name: string;
  description: string;
  speed: number;
}

export type ExporterClass = Partial<Record<ExporterField, string>>;
export type InterfaceClass = Partial<Record<InterfaceField, string>>;

type Subject = { exporter: ExporterAttributes; iface?: InterfaceAttributes };
type Value = string | number;

function valueOf(attribute: Attribute, s: Subject): Value | undefined {
  switch (attribute) {
    case 'Exporter.Name': return s.exporter.name;
    case 'Exporter.Address': return s.exporter.address;
    case 'Interface.Name': return s.iface?.name;
    case 'Interface.Description': return s.iface?.description;
    case 'Interface.Speed': return s.iface?.speed;
    case 'Interface.Index': return s.iface?.index;
  }
}

/** Compiled patterns, shared by every evaluation (a pattern's text is its key). */
const patterns = new Map<string, RegExp>();
function pattern(source: string): RegExp {
  let re = patterns.get(source);
  if (!re) {
    re = new RegExp(source, 'u');
    if (patterns.size > 10_000) patterns.clear();
    patterns.set(source, re);
  }
  return re;
}

function inRanges(address: string, operand: Operand): boolean {
  const at = parseAddressRange(address);
  if (!at || operand.kind !== 'ranges') return false;
  return operand.ranges.some((r) => at.first >= r.first && at.first <= r.last);
}

/** Whether a comparison holds; a `matches` that holds leaves its groups in `captures`. */
function compare(c: Extract<Condition, { kind: 'compare' }>, s: Subject, captures: string[][]): boolean {
  const value = valueOf(c.attribute, s);
  if (value === undefined) return false;
  const o = c.operand;
  if (o.kind === 'ranges') return (c.operator === '!=') !== inRanges(String(value), o);
  if (o.kind === 'regex') {
    const m = pattern(o.source).exec(String(value));
    if (m) captures.push(m.map((g) => g ?? ''));
    return m !== null;
  }
  if (o.kind === 'strings' || o.kind === 'numbers') return (o.values as Value[]).includes(value);
  const other = o.value;
  switch (c.operator) {
    case '==': return value === other;
    case '!=': return value !== other;
    case '<': return value < other;
    case '<=': return value <= other;
    case '>': return value > other;
    case '>=': return value >= other;
    case 'startsWith': return String(value).startsWith(String(other));
    case 'endsWith': return String(value).endsWith(String(other));
    case 'contains': return String(value).includes(String(other));
    default: return false;
  }
}

function holds(c: Condition, s: Subject, captures: string[][]): boolean {
  switch (c.kind) {
    case 'true': return true;
    case 'not': return !holds(c.operand, s, []);
    case 'and': return holds(c.left, s, captures) && holds(c.right, s, captures);
    case 'or': return holds(c.left, s, captures) || holds(c.right, s, captures);
    case 'compare': return compare(c, s, captures);
  }
}

/** A decision's value for this subject; undefined (no decision) when it comes out empty. */
function decided(d: Decision, s: Subject, captures: string[][]): string | undefined {
  let value: string | undefined;
  if (d.value.kind === 'literal') value = d.value.value;
  else if (d.value.kind === 'attribute') value = String(valueOf(d.value.attribute, s) ?? '');
  else value = captures.find((groups) => groups.length > (d.value as { group: number }).group)?.[d.value.group];
  const trimmed = value?.trim().slice(0, maxValueLength);
  return trimmed ? trimmed : undefined;
}

/** Runs the rules in order; each field keeps the first value decided for it (the first decision wins). */
function evaluate<F extends ClassField>(rules: readonly Rule[], s: Subject, wanted: readonly F[]): Partial<Record<F, string>> {
  const result: Partial<Record<F, string>> = {};
  for (const rule of rules) {
    if (rule.readsInterface && !s.iface) continue;
    if (!rule.decisions.some((d) => wanted.includes(d.field as F) && result[d.field as F] === undefined)) continue;
    const captures: string[][] = [];
    if (!holds(rule.condition, s, captures)) continue;
    for (const d of rule.decisions) {
      const field = d.field as F;
      if (!wanted.includes(field) || result[field] !== undefined) continue;
      const value = decided(d, s, captures);
      if (value !== undefined) result[field] = value;
    }
    if (wanted.every((f) => result[f] !== undefined)) break;
  }
  return result;
}

/** An exporter's group, role, site and region: rules that read interfaces do not take part. */
export function classifyExporter(rules: readonly Rule[], exporter: ExporterAttributes): ExporterClass {
  return evaluate(rules, { exporter }, exporterFields);
}

/** An interface's boundary, connectivity and provider, by rules over it and its exporter. */
export function classifyInterface(rules: readonly Rule[], exporter: ExporterAttributes, iface: InterfaceAttributes): InterfaceClass {
  return evaluate(rules, { exporter, iface }, interfaceFields);
}
