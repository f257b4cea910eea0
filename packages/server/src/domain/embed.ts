// Parsing of the `message_embed` parameter: JSON text -> a complete, well-typed embed.
import { type Embed, type EmbedField, emptyEmbed } from './record.ts';
import { CONTROL_CHARACTERS_PROBLEM, hasControlCharacter } from './text.ts';

const TEXT_MEMBERS = ['title', 'description', 'footer', 'image', 'thumbnail'] as const;

export type EmbedParse = { ok: true; embed: Embed } | { ok: false; problem: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Members not given become the text "None" (`fields` becomes []); unknown members are ignored. Empty
 * text is an embed with no members (a message without one).
 */
export function parseEmbed(text: string): EmbedParse {
  if (text.trim() === '') return { ok: true, embed: emptyEmbed() };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, problem: 'must be a JSON object (the text is not valid JSON)' };
  }
  if (!isObject(value)) return { ok: false, problem: 'must be a JSON object' };

  const embed = emptyEmbed();
  for (const member of TEXT_MEMBERS) {
    const v = value[member];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') return { ok: false, problem: `member "${member}" must be a string` };
    if (hasControlCharacter(v)) return { ok: false, problem: `member "${member}" ${CONTROL_CHARACTERS_PROBLEM}` };
    if (v === '') continue; // empty is "None" in the seed's records, as a missing member is
    embed[member] = v;
  }
  const fields = value.fields;
  if (fields !== undefined && fields !== null) {
    if (!Array.isArray(fields)) return { ok: false, problem: 'member "fields" must be an array' };
    const parsed: EmbedField[] = [];
    for (const [i, f] of fields.entries()) {
      if (!isObject(f) || typeof f.name !== 'string' || typeof f.value !== 'string') {
        return { ok: false, problem: `fields[${i}] must be an object with string "name" and "value"` };
      }
      if (hasControlCharacter(f.name) || hasControlCharacter(f.value))
        return { ok: false, problem: `fields[${i}] ${CONTROL_CHARACTERS_PROBLEM}` };
      if (f.inline !== undefined && f.inline !== null && typeof f.inline !== 'boolean') {
        return { ok: false, problem: `fields[${i}].inline must be a boolean` };
      }
      parsed.push({ name: f.name, value: f.value, inline: f.inline ?? false });
    }
    embed.fields = parsed;
  }
  return { ok: true, embed };
}
