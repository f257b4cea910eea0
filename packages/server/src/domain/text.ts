// What text the record's parameters may hold. C0 control characters other than tab, line feed and
// carriage return have no place in chat text, and JSON writes each as six characters (`\u0000`): a
// value of them would store six times its length. The spec refuses them in every text parameter
// (this pattern, checked on the percent-decoded value); the embed's JSON text can still spell them as
// escapes, so its members are checked here.

/** The `pattern` of every text query parameter in the spec (openapi/components/parameters/). */
export const NO_CONTROL_CHARACTERS_PATTERN = '^[^\\x00-\\x08\\x0B\\x0C\\x0E-\\x1F]*$';

const CONTROL_CHARACTER = /[\x00-\x08\x0B\x0C\x0E-\x1F]/;

/** What the 400 says of a text holding one. */
export const CONTROL_CHARACTERS_PROBLEM =
  'must not contain control characters (U+0000 to U+001F) other than tab, line feed and carriage return';

export const hasControlCharacter = (text: string): boolean => CONTROL_CHARACTER.test(text);
