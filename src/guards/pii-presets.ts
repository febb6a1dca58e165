// Personal-data presets, off unless the rules name them (`guards.pii.presets`): e-mail addresses,
// phone numbers, payment card numbers (with their Luhn checksum), and a few national id formats
// with a fixed shape (US social security numbers, UK national insurance numbers, IBANs with their
// mod-97 check). Each is a detector like a secret format, so they are found, redacted and audited
// the same way.

import type { Detector } from './detector.js';

function pii(id: string, label: string, hints: readonly string[], source: string, valid?: (value: string) => boolean): Detector {
  return Object.freeze({ id, label, kind: 'pii' as const, hints: Object.freeze([...hints]), pattern: new RegExp(source, 'gd'), valid });
}

/** The Luhn checksum of a card number (spaces and dashes ignored). */
function luhnValid(number: string): boolean {
  const digits = number.replace(/[ -]/g, '');
  if (!/^[0-9]{13,19}$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** ISO 13616's check: the IBAN, rearranged and read as a number, is 1 modulo 97. */
function ibanValid(iban: string): boolean {
  const compact = iban.replace(/ /g, '').toUpperCase();
  const moved = compact.slice(4) + compact.slice(0, 4);
  let rest = 0;
  for (const char of moved) {
    const value = char >= 'A' && char <= 'Z' ? char.charCodeAt(0) - 55 : char.charCodeAt(0) - 48;
    rest = value > 9 ? (rest * 100 + value) % 97 : (rest * 10 + value) % 97;
  }
  return rest === 1;
}

// A card's issuer ranges (Visa, Mastercard, Amex, Discover, JCB, Diners, UnionPay): a run of digits
// that passes Luhn by chance but starts elsewhere is not a card.
const CARD_PREFIX = /^(?:4|5[1-5]|2[2-7]|3[47]|6(?:011|5|4[4-9]|2)|35|30[0-5]|36|38)/;

export const PII_PRESETS: readonly Detector[] = Object.freeze([
  pii(
    'email',
    'email address',
    ['@'],
    String.raw`(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,24}(?![A-Za-z0-9-])`,
  ),
  pii(
    'phone',
    'phone number',
    [],
    String.raw`(?<![0-9A-Za-z+])(?:\+[1-9][0-9]{0,2}[ .-]?(?:\(?[0-9]{1,4}\)?[ .-]?){2,4}[0-9]{2,4}|\(?[2-9][0-9]{2}\)?[ .-][0-9]{3}[ .-][0-9]{4})(?![0-9])`,
    (value) => {
      const digits = value.replace(/[^0-9]/g, '').length;
      return digits >= 10 && digits <= 15;
    },
  ),
  pii(
    'card-number',
    'card number',
    [],
    String.raw`(?<![0-9])[0-9](?:[ -]?[0-9]){12,18}(?![0-9])`,
    (value) => CARD_PREFIX.test(value.replace(/[ -]/g, '')) && luhnValid(value),
  ),
  pii(
    'us-ssn',
    'us social security number',
    ['-'],
    String.raw`(?<![0-9-])(?!000|666|9[0-9]{2})[0-9]{3}-(?!00)[0-9]{2}-(?!0000)[0-9]{4}(?![0-9-])`,
  ),
  pii(
    'uk-nino',
    'uk national insurance number',
    [],
    String.raw`(?<![A-Za-z0-9])(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?[0-9]{2} ?[0-9]{2} ?[0-9]{2} ?[A-D](?![A-Za-z0-9])`,
  ),
  pii('iban', 'iban', [], String.raw`(?<![A-Za-z0-9])[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?(?![A-Za-z0-9])`, ibanValid),
]);

/** The preset ids the rules may name. */
export const PII_PRESET_IDS: ReadonlySet<string> = new Set(PII_PRESETS.map((d) => d.id));
