/**
 * The layering of the code base, checked by `npm run lint:deps` (part of `npm test`).
 * core/ is shared by the API and the pipeline, so it depends on neither; scripts/ and test/ sit on top.
 * Type-only imports count too: a cycle of types is still two modules that cannot be understood apart.
 */
const production = '^(core|api|pipeline|scripts)/';
// The benchmarks, and `afterimage bench generate` that builds their corpus for trying search by hand.
const benchmarks = '^scripts/(bench/|commands/bench\\.ts$)';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Modules that import each other, directly or around a loop: split out what both need.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-circular-folders',
      severity: 'error',
      comment: 'Folders that import each other (core/a/x → core/b/y → core/a/z): one of them belongs lower down.',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
    {
      name: 'core-stands-alone',
      severity: 'error',
      comment: 'core/ is shared by the API, the pipeline and the operator commands: it imports none of them.',
      from: { path: '^core/' },
      to: { path: '^(api|pipeline|scripts|test)/' },
    },
    {
      name: 'api-not-pipeline',
      severity: 'error',
      comment: 'The API and the pipeline meet only in core/ (jobs, events, the database).',
      from: { path: '^api/' },
      to: { path: '^(pipeline|scripts|test)/' },
    },
    {
      name: 'pipeline-not-api',
      severity: 'error',
      comment: 'The API and the pipeline meet only in core/ (jobs, events, the database).',
      from: { path: '^pipeline/' },
      to: { path: '^(api|scripts|test)/' },
    },
    {
      name: 'surfaces-share-actions',
      severity: 'error',
      comment:
        'Pages and MCP tools perform the actions of api/actions/, as REST routes do; none of them calls another surface (a route module).',
      from: { path: '^api/(web|mcp)/' },
      to: { path: '^api/routes/' },
    },
    {
      name: 'actions-below-surfaces',
      severity: 'error',
      comment: 'Actions are what the surfaces share: they import none of them (routes, pages, MCP).',
      from: { path: '^api/actions/' },
      to: { path: '^api/(routes|web|mcp)/' },
    },
    {
      name: 'production-not-test',
      severity: 'error',
      comment: 'Shipped code does not depend on test code (the benchmarks may use its fake servers).',
      from: { path: production, pathNot: benchmarks },
      to: { path: '^test/' },
    },
    {
      name: 'tests-not-benchmarks',
      severity: 'error',
      comment: 'What tests and benchmarks share lives in test/kit, so neither imports the other.',
      from: { path: '^test/' },
      to: { path: '^scripts/bench/' },
    },
    {
      name: 'test-kit-not-scripts',
      severity: 'error',
      comment: 'The test kit builds stacks from core/, api/ and pipeline/, never from the operator commands.',
      from: { path: '^test/kit/' },
      to: { path: '^scripts/' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to nothing: a typo or a file moved without its importers.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      extensions: ['.ts', '.tsx', '.js', '.mjs'],
      // Packages' subpath exports (vitest/node, tsx/esm/api) resolve as Node resolves them.
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
