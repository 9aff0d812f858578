/**
 * The language a stenogram is in: the caller's hint when it is a real ISO 639 code, else what
 * detectLanguage (the offline summaries' franc-based detector) reads in the words.
 */
import { iso6393 } from 'iso-639-3';
import { detectLanguage, toIso6391 } from '../text/detectLanguage.ts';

let codes: Map<string, string> | undefined;

/** Every ISO 639-1, 639-2 (B and T) and 639-3 code of a language, to the code we store (639-1, else 639-3). */
function knownCodes(): Map<string, string> {
  if (codes) return codes;
  codes = new Map();
  for (const language of iso6393) {
    // 'und', 'mul', 'zxx', 'mis' name no language: a hint like that says nothing.
    if (language.type === 'special') continue;
    const stored = toIso6391(language.iso6393);
    // 639-3 codes are accepted too: the stored language is one where there is no 639-1 code.
    for (const code of [language.iso6391, language.iso6392B, language.iso6392T, language.iso6393]) if (code) codes.set(code, stored);
  }
  return codes;
}

/** "en-US", "pt_BR", "ger", "deu" as the stored code ("en", "pt", "de", "de"); null for anything that is no ISO 639 code. */
export function validLanguageHint(hint: string | null): string | null {
  const primary = hint?.trim().toLowerCase().split(/[-_]/)[0] ?? '';
  return /^[a-z]{2,3}$/.test(primary) ? (knownCodes().get(primary) ?? null) : null;
}

/** The hint when it is valid (the caller knows best), else the language detected in `text`. */
export function stenogramLanguage(hint: string | null, text: string): string {
  return validLanguageHint(hint) ?? detectLanguage(text, null);
}
