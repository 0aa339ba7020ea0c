/** What the detector can find; the switch names of an agent's `privacy.redact` block. */
export const REDACTION_SWITCHES = ['cards', 'ssn', 'iban', 'email', 'phone'] as const

/** One switch of {@link REDACTION_SWITCHES}. */
export type RedactionSwitch = (typeof REDACTION_SWITCHES)[number]

/** Which kinds are redacted; cards and SSNs are on unless turned off (PCI DSS and most teams' first need). */
export type RedactionSwitches = Record<RedactionSwitch, boolean>

/** The defaults: cards and SSNs on, the rest off. */
export const DEFAULT_REDACTION_SWITCHES: Readonly<RedactionSwitches> = { cards: true, ssn: true, iban: false, email: false, phone: false }

/**
 * The kind a span is reported as. `cvc` and `expiry` belong to the `cards` switch: they are only looked for
 * near a card number.
 */
export type RedactionKind = 'card' | 'cvc' | 'expiry' | 'ssn' | 'iban' | 'email' | 'phone'

/** Options of `redact` and `createRedactor`. */
export interface RedactOptions {
  /** Switches given here override the defaults one by one. */
  readonly redact?: Partial<RedactionSwitches>
  /** The text that replaces a span; `[card]`, `[ssn]`... by default. */
  readonly marker?: (kind: RedactionKind) => string
}

/** Options with every default filled. */
export interface ResolvedRedactOptions {
  readonly redact: Readonly<RedactionSwitches>
  readonly marker: (kind: RedactionKind) => string
}

/** The default marker: the kind in brackets. */
export function defaultMarker(kind: RedactionKind): string {
  return `[${kind}]`
}

/** Fills the defaults of {@link RedactOptions}. */
export function resolveRedactOptions(options: RedactOptions = {}): ResolvedRedactOptions {
  return { redact: { ...DEFAULT_REDACTION_SWITCHES, ...options.redact }, marker: options.marker ?? defaultMarker }
}

/** The switch that governs a kind. */
export function switchOf(kind: RedactionKind): RedactionSwitch {
  switch (kind) {
    case 'card':
    case 'cvc':
    case 'expiry':
      return 'cards'
    default:
      return kind
  }
}
