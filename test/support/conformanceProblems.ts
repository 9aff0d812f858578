/**
 * What the OpenAPI conformance check (conformance.ts) found since the last test. Kept apart from the check,
 * which loads the whole API to build its document: conformance-setup.ts runs for every test file, and a file
 * that starts no test server (about a third) need not load the API to find no problems.
 */
export const conformanceProblems: string[] = [];

/** Throws with every problem found since the last call (and forgets them). */
export function expectConformingResponses(): void {
  if (conformanceProblems.length === 0) return;
  const found = conformanceProblems.splice(0);
  throw new Error(`responses that do not match the OpenAPI document:\n- ${found.join('\n- ')}`);
}
