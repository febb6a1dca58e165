// What one detector is: a named pattern of a secret or personal data, found in text. A detector is
// searched only when one of its hints (literal substrings every match contains) occurs in the text,
// so clean text costs one prefilter scan (text-scan.ts), not one run per pattern.

/** A secret format (`secret`) or a personal-data preset (`pii`). */
type DetectorKind = 'secret' | 'pii';

export interface Detector {
  /** Stable id, used in the rules (`guards.secrets.formats`) and the audit trail: `github-token`. */
  readonly id: string;
  /** What the redaction marker says was removed: `[redacted: github token]`. */
  readonly label: string;
  readonly kind: DetectorKind;
  /**
   * Substrings one of which every match contains (matched case-insensitively by the prefilter).
   * Empty: the detector's pattern runs on every text the prefilter lets through.
   */
  readonly hints: readonly string[];
  /**
   * Global, with indices (`gd`). Group `secret`, when the pattern has it, is the part removed (a
   * password inside a connection string); otherwise the whole match is.
   */
  readonly pattern: RegExp;
  /** A check of the removed part the pattern cannot express (a checksum, the entropy of a value). */
  readonly valid?: (value: string) => boolean;
}
