/**
 * Text from the cluster made safe to print on a terminal. Condition messages, Event notes, labels and
 * annotations are written by node agents, other controllers or anyone with `events create`; printed raw, an
 * escape sequence in them retitles the window, clears the screen or rewrites what the operator reads, a bidi
 * override reorders it, and a zero-width character makes two different strings print the same. Every string
 * the plugin prints goes through `terminalSafe`; a name compared against a trusted one goes through
 * `normalizeName` first. Pure.
 */

// ESC (or its one-byte C1 form) sequences, removed whole: OSC, DCS, SOS, PM and APC strings up to BEL or ST
// (ESC \ or 0x9C), CSI with parameters, then any other escape (ECMA-48 / ISO 2022 forms: intermediates, final).
const ESCAPE_SEQUENCE = new RegExp(
  [
    "(?:\\u001b[\\]PX^_]|[\\u0090\\u0098\\u009d\\u009e\\u009f])[\\s\\S]*?(?:\\u0007|\\u001b\\\\|\\u009c)",
    "(?:\\u001b\\[|\\u009b)[\\u0030-\\u003f]*[\\u0020-\\u002f]*[\\u0040-\\u007e]",
    "\\u001b[\\u0020-\\u002f]*[\\u0030-\\u007e]"
  ].join("|"),
  "gu"
)
// Line and column breaks inside one value: a space, so a message cannot start a fake row of a table.
const BREAKS = /[\t\n\v\f\r\u0085\u2028\u2029]+/gu
/**
 * Characters that print as nothing: format characters (Cf: zero-width space, joiner and non-joiner, word joiner,
 * BOM, soft hyphen, bidi marks, embeddings, overrides and isolates, tag characters) and the rest of Unicode's
 * default-ignorable code points (Hangul fillers, variation selectors, combining grapheme joiner).
 */
const INVISIBLE = /[\p{Cf}\p{Bidi_Control}\p{Default_Ignorable_Code_Point}]/gu
// Whatever control character is left (C0, DEL, C1, a lone or unterminated ESC) and the invisible ones.
const CONTROL = /[\p{Cc}\p{Cf}\p{Bidi_Control}\p{Default_Ignorable_Code_Point}]/gu

/** One line with no control or invisible character: escape sequences removed, breaks turned into a space. */
export const terminalSafe = (text: string): string =>
  text.replace(ESCAPE_SEQUENCE, "").replace(BREAKS, " ").replace(CONTROL, "")

/** Text the plugin laid out in lines (tables, usage): each line made safe, its own line breaks kept. */
export const terminalSafeLines = (text: string): string => text.split("\n").map(terminalSafe).join("\n")

/** Whether the text holds a character that prints as nothing (format, bidi, default-ignorable). */
export const hasInvisible = (text: string): boolean => new RegExp(INVISIBLE.source, "u").test(text)

/**
 * A name (an Event's reporting component, say) as it reads on screen, for comparing with a known one: invisible
 * characters removed, NFKC-normalised (fullwidth and other compatibility forms become the plain letters they
 * print as), dashes folded to "-", made terminal-safe and trimmed. Two names that print alike normalise alike
 * (for these cases; other look-alike letters, e.g. Cyrillic for Latin, stay apart and are visible as non-ASCII).
 */
export const normalizeName = (text: string): string =>
  terminalSafe(text.replace(INVISIBLE, "").normalize("NFKC").replace(INVISIBLE, ""))
    .replace(/\p{Pd}/gu, "-")
    .trim()
