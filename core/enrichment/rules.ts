import type { AddressRange } from '../flow-query';

/**
 * The classification rules as parsed (rule-parser.ts): plain data a
 * classifier (classifier.ts) evaluates. Each rule is a condition over an
 * exporter's and an interface's attributes and the decisions it makes.
 */
export const attributes = {
  'Exporter.Name': 'string',
  'Exporter.Address': 'address',
  'Interface.Name': 'string',
  'Interface.Description': 'string',
  'Interface.Speed': 'number',
  'Interface.Index': 'number',
} as const;
export type Attribute = keyof typeof attributes;
export type AttributeKind = (typeof attributes)[Attribute];

/** The fields an exporter is classified into. */
export const exporterFields = ['group', 'role', 'site', 'region'] as const;
/** The fields an interface is classified into. */
export const interfaceFields = ['boundary', 'connectivity', 'provider'] as const;
export type ExporterField = (typeof exporterFields)[number];
export type InterfaceField = (typeof interfaceFields)[number];
export type ClassField = ExporterField | InterfaceField;

/** Fields whose values are a fixed set, checked when the rules are parsed. */
export const fieldValues: Partial<Record<ClassField, readonly string[]>> = {
  boundary: ['external', 'internal'],
  connectivity: ['transit', 'peering', 'pni', 'ix', 'customer'],
};

export const stringOperators = ['==', '!=', 'startsWith', 'endsWith', 'contains', 'matches', 'in'] as const;
export const numberOperators = ['==', '!=', '<', '<=', '>', '>=', 'in'] as const;
export const addressOperators = ['==', '!=', 'in'] as const;
export type Operator = (typeof stringOperators)[number] | (typeof numberOperators)[number];

/** Where a part of the rule text starts. */
export interface Position {
  line: number;
  column: number;
}

export type Operand =
  | { kind: 'string'; value: string }
  | { kind: 'strings'; values: string[] }
  | { kind: 'number'; value: number }
  | { kind: 'numbers'; values: number[] }
  | { kind: 'regex'; source: string; groups: number }
  | { kind: 'ranges'; ranges: AddressRange[] };

export type Condition =
  | { kind: 'true' }
  | { kind: 'not'; operand: Condition }
  | { kind: 'and' | 'or'; left: Condition; right: Condition }
  | { kind: 'compare'; attribute: Attribute; operator: Operator; operand: Operand; at: Position };

/** What a decision sets its field to: a fixed value, an attribute's value, or a group the rule's `matches` captured. */
export type DecisionValue = { kind: 'literal'; value: string } | { kind: 'attribute'; attribute: Attribute } | { kind: 'capture'; group: number };

export interface Decision {
  field: ClassField;
  value: DecisionValue;
}

export interface Rule {
  condition: Condition;
  decisions: Decision[];
  /** Whether the condition reads an interface's attributes (such a rule cannot classify an exporter alone). */
  readsInterface: boolean;
  at: Position;
}

/** The most rules in one set, and the longest regular expression, so one evaluation stays cheap. */
export const maxRules = 500;
export const maxRegexLength = 256;
/** The longest value a decision may give a field. */
export const maxValueLength = 100;
