import { afterAll, afterEach } from 'vitest';
import { expectConformingResponses } from './conformanceProblems.ts';

// Every test fails on a response of a test API server that the OpenAPI document does not allow
// (test/support/conformance.ts); a response finished after the last test is checked at the end.
afterEach(() => expectConformingResponses());
afterAll(() => expectConformingResponses());
