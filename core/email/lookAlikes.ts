/**
 * Addresses that look like other addresses (Unicode TR39, Security Mechanisms): the confusable skeleton
 * that makes look-alikes equal, and the mixed-script test that refuses a part written in two scripts.
 * Their tables are loaded at the first address checked: most processes check none.
 */

/**
 * TR39's skeleton (§4): NFD, each character replaced by its prototype in confusables.txt (unhomoglyph's
 * table of it), NFD again. Addresses with the same skeleton look the same: `аdmin` with a Cyrillic а
 * and `admin`, but also `rn` and `m`, `1` and `l`.
 */
export async function emailSkeleton(normalised: string): Promise<string> {
  const { default: unhomoglyph } = await import('unhomoglyph');
  return unhomoglyph(normalised.normalize('NFD')).normalize('NFD');
}

interface ScriptTest {
  name: string;
  pattern: RegExp;
}

let scriptTests: Promise<ScriptTest[]> | undefined;
/** A test per script ECMAScript names (by Script_Extensions); a script this Node's Unicode does not know is left out. */
const loadScriptTests = () =>
  (scriptTests ??= import('unicode-property-value-aliases-ecmascript').then(({ default: valueAliases }) =>
    [...new Set(valueAliases.get('Script')!.values())]
      .filter((name) => !['Common', 'Inherited', 'Unknown'].includes(name))
      .flatMap((name) => {
        try {
          return [{ name, pattern: new RegExp(`^\\p{scx=${name}}$`, 'u') }];
        } catch {
          return [];
        }
      }),
  ));
/** Digits, punctuation, combining accents: they go with any script. */
const ANY_SCRIPT = /^[\p{scx=Common}\p{scx=Inherited}]$/u;
/** TR39's augmented script sets (§5.1): the writing systems a CJK script takes part in. */
const WRITING_SYSTEMS: Record<string, string[]> = {
  Han: ['Japanese', 'Korean', 'Han_with_Bopomofo'],
  Hiragana: ['Japanese'],
  Katakana: ['Japanese'],
  Hangul: ['Korean'],
  Bopomofo: ['Han_with_Bopomofo'],
};
const CJK = ['Japanese', 'Korean', 'Han_with_Bopomofo'];

/** The scripts a character belongs to, augmented; undefined for one that goes with any (Common, Inherited). */
function scriptsOf(character: string, scripts: ScriptTest[]): Set<string> | undefined {
  if (ANY_SCRIPT.test(character)) return undefined;
  const names = scripts.filter(({ pattern }) => pattern.test(character)).flatMap(({ name }) => [name, ...(WRITING_SYSTEMS[name] ?? [])]);
  return new Set(names.length > 0 ? names : ['Unknown']);
}

/** The scripts every one of the sets shares; undefined when there are no sets (text of Common characters only). */
const shared = (sets: Set<string>[]) =>
  sets.length === 0 ? undefined : sets.reduce((common, set) => new Set([...common].filter((name) => set.has(name))));

/**
 * TR39's "highly restrictive" level (§5.2): the text is in one script, or Latin with one CJK writing
 * system (Han with Hiragana and Katakana, Han with Bopomofo, Han with Hangul).
 */
function highlyRestrictive(text: string, scripts: ScriptTest[]): boolean {
  const sets = [...text].map((character) => scriptsOf(character, scripts)).filter((set) => set !== undefined);
  const all = shared(sets);
  if (all === undefined || all.size > 0) return true;
  const besidesLatin = shared(sets.filter((set) => !set.has('Latin')));
  return besidesLatin !== undefined && CJK.some((system) => besidesLatin.has(system));
}

/**
 * The first part of an address that mixes scripts, with the scripts it mixes: the local part as a
 * whole, or one label of the domain (`пример.com` is fine, `gооgle.com` with Cyrillic o is not).
 */
export async function mixedScripts(normalised: string): Promise<{ part: string; scripts: string[] } | undefined> {
  const tests = await loadScriptTests();
  const at = normalised.lastIndexOf('@');
  const part = [normalised.slice(0, at), ...normalised.slice(at + 1).split('.')].find((text) => !highlyRestrictive(text, tests));
  if (part === undefined) return undefined;
  const scripts = new Set([...part].flatMap((character) => tests.filter(({ pattern }) => pattern.test(character)).map(({ name }) => name)));
  return { part, scripts: [...scripts] };
}
